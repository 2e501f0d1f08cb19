import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { newEnvironment } from '../helpers/world.ts';

describe("the caller's organizations on every client surface", () => {
  it('widgets REST, GraphQL and typed tRPC list the same organizations, the token one current', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const other = await env.http.post('/organizations', { name: 'Zeta Corp' });
    await env.http.post('/user_management/organization_memberships', {
      user_id: a.userId,
      organization_id: other.body.id,
    });
    // Someone else's organization is never listed.
    await clientSetup(env);

    const rest = await a.http.get('/_widgets/UserManagement/organizations');
    expect(rest.status).toBe(200);
    expect(rest.body.data).toHaveLength(2);
    expect(rest.body.data[0]).toMatchObject({ id: a.organizationId, current: true, favicon: null });
    expect(rest.body.data[1]).toEqual({ id: other.body.id, name: 'Zeta Corp', current: false, favicon: null });

    const gql = await a.graphql('{ organizations { id name isCurrent } }');
    expect(gql.status).toBe(200);
    expect(gql.body.data.organizations.map((o: { id: string }) => o.id)).toEqual([a.organizationId, other.body.id]);

    const trpc = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${env.world.url}/trpc`, headers: { Authorization: `Bearer ${a.token}` } })],
    });
    const typed = await trpc.client.organizations.query();
    expect(typed).toEqual([
      { id: a.organizationId, name: expect.any(String), isCurrent: true },
      { id: other.body.id, name: 'Zeta Corp', isCurrent: false },
    ]);
  });

  it('answers 403 without a token, and an API key is not a client token', async () => {
    const env = await newEnvironment();
    const none = await fetch(`${env.world.url}/_widgets/UserManagement/organizations`);
    expect(none.status).toBe(403);
    expect(await none.json()).toMatchObject({ message: expect.any(String) });
    expect((await env.http.get('/_widgets/UserManagement/organizations')).status).toBe(403);
  });
});
