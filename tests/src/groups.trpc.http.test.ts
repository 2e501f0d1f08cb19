import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from './helpers/people.ts';
import { newEnvironment, type TestEnvironment } from './helpers/world.ts';

function clientOf(env: TestEnvironment) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${env.world.url}/trpc`, headers: () => ({ Authorization: `Bearer ${env.apiKey}` }) })],
  });
}

describe('the typed tRPC client', () => {
  it('sees users, memberships and groups (nested memberships) over /trpc', async () => {
    const env = await newEnvironment();
    const trpc = clientOf(env);
    const org = await trpc.organizations.create.mutate({ name: 'Acme' });
    const user = await trpc.users.create.mutate({ email: uniqueEmail() });
    const om = await trpc.organizationMemberships.create.mutate({ user_id: user.id, organization_id: org.id });
    const group = await trpc.groups.create.mutate({ organization_id: org.id, name: 'G' });
    const added = await trpc.groups.memberships.add.mutate({
      organization_id: org.id,
      group_id: group.id,
      organization_membership_id: om.id,
    });
    expect(added).toEqual(group);
    const members = await trpc.groups.memberships.list.query({ organization_id: org.id, group_id: group.id });
    expect(members.data).toEqual([om]);
    const groups = await trpc.groups.listForMembership.query({ id: om.id });
    expect(groups.data).toEqual([group]);

    const error = await trpc.groups.get
      .query({ organization_id: org.id, group_id: 'group_01HE8GSH8FQPASKSY27THRKRBP' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({
      httpStatus: 404,
      contract: { status: 404, body: { code: 'entity_not_found' } },
    });
  });
});
