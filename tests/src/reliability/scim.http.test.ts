import { SCIM_ROUTES } from '@atrium/routers';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, type HttpResponse, newEnvironment } from '../helpers/world.ts';
import { hostileString, makeScimFixture, SCIM_OPERATIONS, type ScimFixture, snapshot } from './catalog.ts';

/**
 * The reliability suites over the SCIM surface (issue #36), one row of SCIM_OPERATIONS per
 * route: the catalogue is complete; another directory's token (of the same organization, and of
 * another) is refused (401) and changes nothing; hostile input never answers 5xx, always answers SCIM's error shape, and an error
 * stores nothing; malformed bodies are refused as SCIM errors; a create run again is refused
 * (SCIM has no Idempotency-Key: a repeated POST is a uniqueness conflict) and adds nothing.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 6);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10);
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

const stats = { requests: 0, fiveXx: 0 };
afterAll(() => {
  console.info(`[reliability] scim fuzz: seed ${SEED}, ${stats.requests} requests, ${stats.fiveXx} 5xx`);
});

function expectScimError(res: HttpResponse, status?: number) {
  expect(res.status, res.text).toBeLessThan(500);
  if (status !== undefined) expect(res.status, res.text).toBe(status);
  if (res.status < 400) return;
  expect(res.headers.get('content-type') ?? '', res.text).toMatch(/^application\/scim\+json/);
  expect(res.body).toEqual({
    schemas: [ERROR_SCHEMA],
    status: String(res.status),
    detail: expect.any(String),
    ...(res.body?.scimType === undefined ? {} : { scimType: expect.any(String) }),
  });
}

describe('SCIM catalogue', () => {
  it('has a row for every SCIM route', () => {
    const listed = new Set(SCIM_OPERATIONS.map((op) => `${op.method} ${op.route}`));
    const missing = SCIM_ROUTES.map((r) => `${r.method} ${r.path}`).filter((r) => !listed.has(r));
    expect(missing).toEqual([]);
  });
});

describe.each(SCIM_OPERATIONS)('SCIM: $name', (op) => {
  let f: ScimFixture;
  beforeAll(async () => {
    f = await makeScimFixture(await newEnvironment());
  });

  it.each([
    ['of the same organization', 'otherToken', 'otherDirectoryId'],
    ['of another organization', 'foreignToken', 'foreignDirectoryId'],
  ] as const)('isolation: a directory %s is refused with 401 and nothing changes', async (_, tokenOf, directoryOf) => {
    const before = await snapshot(f.env);
    const other = new HttpClient(f.env.world.url, {
      Authorization: `Bearer ${f[tokenOf]}`,
      'Content-Type': 'application/scim+json',
    });
    const body = op.sample?.(f) ?? (op.creates ? op.creates.validBody(f) : undefined);
    const res = await other.request(op.method, op.path(f), { body });
    expectScimError(res, 401);
    // The other directory's own path does not reach this directory's records either.
    const ownPath = op.path(f).replace(f.directoryId, f[directoryOf]);
    const own = await other.request(op.method, ownPath, { body });
    if (op.hasParam && !op.route.startsWith('/ResourceTypes') && !op.route.startsWith('/Schemas')) {
      expectScimError(own, 404);
    }
    const after = await snapshot(f.env);
    expect((after.directory_users ?? 0) - (before.directory_users ?? 0)).toBe(
      op.creates?.table === 'directory_users' && own.status === 201 ? 1 : 0,
    );
    expect((after.directory_groups ?? 0) - (before.directory_groups ?? 0)).toBe(
      op.creates?.table === 'directory_groups' && own.status === 201 ? 1 : 0,
    );
  });

  it(`fuzz: never 5xx, always SCIM's error, nothing stored on error (seed ${SEED}, ${RUNS} runs)`, async () => {
    const input = fc.record({
      param: op.hasParam ? fc.option(hostileString, { nil: undefined }) : fc.constant(undefined),
      body: op.body
        ? fc.oneof(fc.record(op.body(f), { requiredKeys: [] }), fc.jsonValue({ maxDepth: 4 }))
        : fc.constant(undefined),
      raw: fc.option(fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('{', '[]', 'null', '{"a":"\\ud800"}')), {
        nil: undefined,
        freq: 6,
      }),
      query: op.query ? fc.record(op.query, { requiredKeys: [] }) : fc.constant({}),
      contentType: fc.constantFrom('application/scim+json', 'application/json', 'text/plain', ''),
    });
    await fc.assert(
      fc.asyncProperty(input, async ({ param, body, raw, query, contentType }) => {
        const before = await snapshot(f.env);
        const search = new URLSearchParams(query as Record<string, string>).toString();
        const path = `${op.path(f, param)}${search ? `?${search}` : ''}`;
        const headers: Record<string, string> = { 'Content-Type': contentType };
        const res = await f.scim.request(op.method, path, {
          ...(op.body && raw !== undefined ? { raw } : op.body ? { body } : {}),
          headers,
        });
        stats.requests += 1;
        if (res.status >= 500) stats.fiveXx += 1;
        expectScimError(res);
        if (res.status >= 400) {
          const after = await snapshot(f.env);
          expect(after.directory_users).toBe(before.directory_users);
          expect(after.directory_groups).toBe(before.directory_groups);
          expect(after.directory_group_members).toBe(before.directory_group_members);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it.runIf(op.body !== undefined)(
    'malformed bodies: invalid JSON is 400 invalidSyntax, other types 415, nothing stored',
    async () => {
      const before = await snapshot(f.env);
      const broken = await f.scim.request(op.method, op.path(f), { raw: '{"userName": ' });
      expectScimError(broken, 400);
      expect(broken.body.scimType).toBe('invalidSyntax');
      const form = await f.scim.request(op.method, op.path(f), {
        raw: 'userName=a',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expectScimError(form, 415);
      const array = await f.scim.request(op.method, op.path(f), { raw: '[1]' });
      expectScimError(array, 400);
      expect(await snapshot(f.env)).toEqual(before);
    },
  );

  it.runIf(op.creates !== undefined)(
    'a create sent again is refused as a uniqueness conflict and adds nothing',
    async () => {
      const body = op.creates?.validBody(f);
      const first = await f.scim.request(op.method, op.path(f), { body });
      expect(first.status, first.text).toBe(201);
      const before = await snapshot(f.env);
      const again = await f.scim.request(op.method, op.path(f), { body });
      expectScimError(again, 409);
      expect(again.body.scimType).toBe('uniqueness');
      expect(await snapshot(f.env)).toEqual(before);
    },
  );
});
