import { beforeAll, describe, expect, it } from 'vitest';
import { ALL_WIDGET_SCOPES, type ClientSetup, clientSetup } from '../helpers/client.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { type Fixture, makeFixture, OPERATIONS } from './catalog.ts';

/**
 * Organization isolation of the client surfaces: every `auth: 'client'` operation of the
 * catalogue, aimed at organization A's resources with the widget token of another organization
 * (of A's environment, and of another environment), is a 404 when it names one, never A's data
 * in a list, and A reads the same afterwards.
 */
const CLIENT_OPERATIONS = OPERATIONS.filter((op) => op.auth === 'client');

let a: Fixture;
let intruders: Array<[string, ClientSetup]>;
const readsOfA: Record<string, string> = {};
const idsOfA = (f: Fixture) => [
  f.organizationId,
  f.userId,
  f.membershipId,
  f.domainId,
  f.invitationId,
  f.sessionId,
  f.spareUserId,
  f.spareMembershipId,
  f.connectionId,
  f.directoryId,
];
const gets = CLIENT_OPERATIONS.filter((op) => op.method === 'GET');

/** The API-key widgets' scopes (system permissions, as the other widgets' are). */
const API_KEY_SCOPES = [
  'widgets:api-keys:manage',
  'widgets:user-api-keys:manage-self',
  'widgets:user-api-keys:manage-all',
];

/**
 * A member of another organization whose widget token holds every scope the client routes check,
 * so that a refusal is the organization's boundary (404), never a missing scope (403).
 */
async function intruderIn(env: TestEnvironment): Promise<ClientSetup> {
  const scopes = [...ALL_WIDGET_SCOPES, 'widgets:audit-log-streaming:manage', ...API_KEY_SCOPES];
  const role = await env.http.post('/authorization/roles', { slug: 'intruder', name: 'Intruder' });
  if (role.status !== 201 && role.status !== 409) throw new Error(`role: ${role.status} ${role.text}`);
  const set = await env.http.put('/authorization/roles/intruder/permissions', { permissions: scopes });
  if (set.status !== 200) throw new Error(`role permissions: ${set.status} ${set.text}`);
  return clientSetup(env, { roleSlug: 'intruder', scopes });
}

beforeAll(async () => {
  const env = await newEnvironment();
  a = await makeFixture(env);
  intruders = [
    ['another organization', await intruderIn(env)],
    ['another environment', await intruderIn(await newEnvironment())],
  ];
  for (const op of gets) readsOfA[op.name] = (await a.clientHttp.get(op.path(a))).text;
});

describe('organization isolation of every client operation', () => {
  it.each(CLIENT_OPERATIONS.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
    for (const [who, intruder] of intruders) {
      const body = op.sample?.(a);
      const res = await intruder.http.request(op.method, op.path(a), body ? { body } : {});
      expect(res.status, `${who}: ${res.text}`).toBeLessThan(500);
      if (op.hasParam) {
        expect(res.status, `${who}: ${res.text}`).toBe(404);
        expect(res.body).toMatchObject({ message: expect.any(String) });
      } else {
        for (const id of idsOfA(a)) expect(res.text, `${who} sees ${id}`).not.toContain(id);
      }
    }
  });

  it('leaves A reading what it read before', async () => {
    // Runs after the attempts above (vitest runs a file's tests in order).
    for (const op of gets) expect((await a.clientHttp.get(op.path(a))).text, op.name).toBe(readsOfA[op.name]);
  });
});
