import { ensureAdminToken, listEnvironments } from '@atrium/routers';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { anyJson, hostileString } from './catalog.ts';
import { adminTokenFor } from './own-app.ts';

/**
 * The admin router (tRPC only, behind the admin token) under hostile input: never a 5xx, the
 * contract's body in every error, and a refused environment create stores nothing.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 6);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

interface AdminProcedure {
  path: string;
  type: 'query' | 'mutation';
  input: (env: TestEnvironment) => fc.Arbitrary<unknown>;
}

const envRef = (env: TestEnvironment) => fc.oneof(fc.constant(env.environmentId), hostileString, anyJson);

const ADMIN_PROCEDURES: AdminProcedure[] = [
  {
    path: 'admin.environments.create',
    type: 'mutation',
    input: () =>
      fc.oneof(
        fc.record(
          { name: fc.oneof(hostileString, anyJson), flags: fc.oneof(fc.dictionary(hostileString, anyJson), anyJson) },
          { requiredKeys: [] },
        ),
        anyJson,
      ),
  },
  { path: 'admin.environments.list', type: 'query', input: () => fc.oneof(fc.constant(undefined), anyJson) },
  {
    path: 'admin.apiKeys.create',
    type: 'mutation',
    input: (env) => fc.record({ environment: envRef(env), live: anyJson }, { requiredKeys: [] }),
  },
  {
    path: 'admin.apiKeys.list',
    type: 'query',
    input: (env) => fc.oneof(fc.record({ environment: envRef(env) }, { requiredKeys: [] }), anyJson),
  },
  {
    path: 'admin.apiKeys.revoke',
    type: 'mutation',
    input: (env) =>
      fc.record({ environment: envRef(env), key_prefix: fc.oneof(hostileString, anyJson) }, { requiredKeys: [] }),
  },
  {
    path: 'admin.flags.set',
    type: 'mutation',
    input: (env) =>
      fc.record(
        { environment: envRef(env), flag: fc.oneof(hostileString, anyJson), enabled: anyJson },
        { requiredKeys: [] },
      ),
  },
];

describe.each(ADMIN_PROCEDURES)('fuzz admin: $path', (procedure) => {
  let env: TestEnvironment;
  let url: string;
  let token: string;

  beforeAll(async () => {
    env = await newEnvironment();
    url = (await getWorld()).url;
    token = adminTokenFor('fuzzadmin');
    await ensureAdminToken(env.deps, token);
  });

  it(`never answers 5xx and always carries the contract's error (seed ${SEED}, ${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(procedure.input(env), fc.boolean(), async (input, withToken) => {
        const headers: Record<string, string> = withToken ? { Authorization: `Bearer ${token}` } : {};
        const encoded = input === undefined ? undefined : JSON.stringify(input);
        const named = (input as { name?: unknown } | null)?.name;
        const name = typeof named === 'string' ? named.trim() : undefined;
        const countNamed = async () => (await listEnvironments(env.deps)).filter((e) => e.name === name).length;
        const before = procedure.path === 'admin.environments.create' && name ? await countNamed() : 0;
        const res =
          procedure.type === 'query'
            ? await fetch(
                `${url}/trpc/${procedure.path}${encoded === undefined ? '' : `?input=${encodeURIComponent(encoded)}`}`,
                {
                  headers,
                },
              )
            : await fetch(`${url}/trpc/${procedure.path}`, {
                method: 'POST',
                headers: { ...headers, 'Content-Type': 'application/json' },
                body: encoded ?? '',
              });
        const text = await res.text();
        expect(res.status, text).toBeLessThan(500);
        if (res.status >= 400) {
          const body = JSON.parse(text) as {
            error: { data: { contract: { status: number; body: { code: string; message: string } } } };
          };
          expect(body.error.data.contract.status).toBe(res.status);
          expect(body.error.data.contract.body).toEqual(
            expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
          );
          if (procedure.path === 'admin.environments.create' && name) expect(await countNamed()).toBe(before);
        }
        if (!withToken) expect(res.status).toBe(401);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
