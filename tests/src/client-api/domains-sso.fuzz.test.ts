import { connections, organizationDomains } from '@atrium/db';
import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ClientSetup, clientSetup } from '../helpers/client.ts';
import { surfaces, trpcStatus } from '../helpers/client-surfaces.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';
import { hostileString, segment } from '../reliability/catalog.ts';

const DOMAINS = '/_widgets/admin-portal/organization-domains';
const RUNS = { numRuns: 40, seed: 22 };

let env: TestEnvironment;
let a: ClientSetup;
let ours: string;
let theirs: string;

const count = async (table: typeof organizationDomains | typeof connections) =>
  (await env.deps.db.select({ id: table.id }).from(table).where(eq(table.environmentId, env.environmentId))).length;

beforeAll(async () => {
  env = await newEnvironment();
  a = await clientSetup(env);
  const b = await clientSetup(env);
  const domain = (organizationId: string) =>
    env.http.post('/organization_domains', { organization_id: organizationId, domain: uniqueDomain() });
  ours = (await domain(a.organizationId)).body.id;
  theirs = (await domain(b.organizationId)).body.id;
});

/** A GraphQL error code a hostile input may cause: the contract's refusals, never a fault. */
const REFUSALS = new Set(['BAD_USER_INPUT', 'NOT_FOUND', 'CONFLICT']);

describe('hostile input on the domain and SSO client surfaces', () => {
  it('REST ids: never 5xx, never a change to either organization', async () => {
    await fc.assert(
      fc.asyncProperty(hostileString, async (id) => {
        for (const res of [
          await a.http.delete(`${DOMAINS}/${segment(id)}`),
          await a.http.post(`${DOMAINS}/${segment(id)}/reverify`),
        ]) {
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
          expect(res.body).toMatchObject({ message: expect.any(String) });
        }
      }),
      RUNS,
    );
    const left = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, env.environmentId));
    expect(left.map((d) => d.id).sort()).toEqual([ours, theirs].sort());
  });

  it('GraphQL domain names and connection names: a refusal stores nothing, an acceptance stores one', async () => {
    await fc.assert(
      fc.asyncProperty(hostileString, async (value) => {
        const [domainsBefore, connectionsBefore] = [await count(organizationDomains), await count(connections)];
        const domain = await a.graphql('mutation($d: String!) { createOrganizationDomain(domain: $d) { id } }', {
          d: value,
        });
        const connection = await a.graphql(
          'mutation($n: String) { createSsoConnection(input: {type: GenericSAML, name: $n}) { id name } }',
          { n: value },
        );
        for (const [res, table, before] of [
          [domain, organizationDomains, domainsBefore],
          [connection, connections, connectionsBefore],
        ] as const) {
          expect(res.status).toBe(200);
          const error = res.body.errors?.[0];
          if (error) expect(REFUSALS.has(error.extensions?.code)).toBe(true);
          expect(await count(table)).toBe(before + (error ? 0 : 1));
        }
      }),
      RUNS,
    );
  });

  it('typed tRPC ids: 404 or 422, never 5xx', async () => {
    const { trpc } = surfaces(env, a);
    await fc.assert(
      fc.asyncProperty(hostileString, async (id) => {
        expect([404, 422]).toContain(await trpcStatus(trpc.client.domains.get.query({ id })));
        expect([404, 422]).toContain(await trpcStatus(trpc.client.sso.delete.mutate({ id })));
      }),
      RUNS,
    );
  });
});
