import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpResponse, newEnvironment } from '../helpers/world.ts';
import { type Fixture, hostileString, httpOf, makeFixture, OPERATIONS, snapshot } from './catalog.ts';

/**
 * Property-based fuzzing of every operation of the catalogue: hostile bodies, query strings,
 * path parameters and headers never produce a 5xx, always produce the contract's JSON error,
 * and an error leaves nothing behind. A fixed seed in `npm test`; `npm run fuzz` runs longer
 * (FUZZ_RUNS, FUZZ_SEED override).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 6);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 300,
});

const headerArb = fc.record(
  {
    'X-Request-ID': printable,
    'Idempotency-Key': printable,
    'Content-Type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
    ),
    Accept: printable,
  },
  { requiredKeys: [] },
);

const stats = { requests: 0, fiveXx: 0 };
afterAll(() => {
  console.info(`[reliability] fuzz: seed ${SEED}, ${stats.requests} requests, ${stats.fiveXx} 5xx`);
});

function expectContractError(res: HttpResponse) {
  expect(res.status, res.text).toBeLessThan(500);
  if (res.status < 400) return;
  expect(res.headers.get('content-type') ?? '').toContain('application/json');
  expect(res.body).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
  if (res.body.errors !== undefined) {
    for (const e of res.body.errors) {
      expect(e).toEqual({ field: expect.any(String), code: expect.any(String), message: expect.any(String) });
    }
  }
}

describe.each(OPERATIONS)('fuzz: $name', (op) => {
  let f: Fixture;
  beforeAll(async () => {
    f = await makeFixture(await newEnvironment());
  });

  it(`never answers 5xx, always the contract's error, stores nothing on error (seed ${SEED}, ${RUNS} runs)`, async () => {
    const input = fc.record({
      param: op.hasParam ? fc.option(hostileString, { nil: undefined }) : fc.constant(undefined),
      body: op.body
        ? fc.oneof(fc.record(op.body(f), { requiredKeys: [] }), fc.jsonValue({ maxDepth: 4 }))
        : fc.constant(undefined),
      raw: fc.option(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.constantFrom('{', '{"a":', '[]', 'null', '""', '{"name":"\\ud800"}'),
        ),
        {
          nil: undefined,
          freq: 6,
        },
      ),
      query: op.query ? fc.record(op.query, { requiredKeys: [] }) : fc.constant({}),
      headers: headerArb,
    });
    let before: Record<string, number> | undefined;
    await fc.assert(
      fc.asyncProperty(input, async ({ param, body, raw, query, headers }) => {
        // What is stored before this request: the last snapshot, retaken after every success.
        before ??= await snapshot(f.env);
        const qs = new URLSearchParams(query as Record<string, string>).toString();
        const path = op.path(f, param) + (qs ? `?${qs}` : '');
        const withBody = op.method === 'POST' || op.method === 'PUT' || op.method === 'PATCH';
        const sendHeaders: Record<string, string> = { ...headers };
        if (withBody && sendHeaders['Content-Type'] === undefined) sendHeaders['Content-Type'] = 'application/json';
        if (!withBody) delete sendHeaders['Content-Type'];
        const res = await httpOf(f, op).request(op.method, path, {
          raw: withBody ? (raw ?? JSON.stringify(body ?? {})) : undefined,
          headers: sendHeaders,
        });
        stats.requests += 1;
        if (res.status >= 500) stats.fiveXx += 1;
        expectContractError(res);
        const after = await snapshot(f.env);
        if (res.status >= 400) {
          const expected = { ...before };
          // A POST with an Idempotency-Key stores its (error) answer for replay, by design.
          if (op.method === 'POST' && headers['Idempotency-Key'] !== undefined)
            expected.idempotency_keys = after.idempotency_keys ?? 0;
          expect(after).toEqual(expected);
        }
        before = after;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // Nothing was polluted along the way.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
