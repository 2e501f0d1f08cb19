// Just-in-time provisioning and the connection's `domains`: a connection with domains vouches only
// for addresses of those domains. Another domain, even one the organization verified, gets no
// membership by domain policy: refused (`domain_not_allowed`, nothing provisioned) unless the
// organization allows profiles outside its domains. A connection without domains follows the
// organization's verified domains alone.
import { connections, organizationMemberships, users } from '@atrium/db';
import { completeSignIn, SsoFailure } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';
import { identity, registerRedirectUri, ssoSetup, startedAuthorization } from './sign-in.ts';

/** A connection whose `domains` are `[domain]`, of an organization that verified `domain` and `other`. */
async function setupWithDomains(env: TestEnvironment, allowOutside: boolean) {
  const setup = await ssoSetup(env, { allowOutside });
  const other = uniqueDomain('other');
  await env.caller.organizations.update({
    id: setup.organization.id,
    domain_data: [
      { domain: setup.domain, state: 'verified' },
      { domain: other, state: 'verified' },
    ],
  });
  const [row] = await env.deps.db
    .update(connections)
    .set({ domains: [{ id: 'conn_domain_1', domain: setup.domain.toUpperCase() }] })
    .where(eq(connections.id, setup.connection.id))
    .returning();
  await registerRedirectUri(env);
  return { ...setup, connection: row ?? setup.connection, other };
}

async function membersOf(env: TestEnvironment, organizationId: string) {
  return env.deps.db
    .select()
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.environmentId, env.environmentId),
        eq(organizationMemberships.organizationId, organizationId),
      ),
    );
}

describe("JIT and the connection's domains", () => {
  it('an address of one of the connection domains is provisioned (verified e-mail, active membership)', async () => {
    const env = await newEnvironment();
    const { domain, organization, connection, scope } = await setupWithDomains(env, false);
    const authorizationId = await startedAuthorization(env, connection);
    await completeSignIn(scope, connection, authorizationId, identity(`ada@${domain}`));
    const [user] = await env.deps.db.select().from(users).where(eq(users.environmentId, env.environmentId));
    expect(user).toMatchObject({ email: `ada@${domain}`, emailVerified: true });
    expect(await membersOf(env, organization.id)).toHaveLength(1);
  });

  it('another verified domain of the organization is refused through this connection, nothing provisioned', async () => {
    const env = await newEnvironment();
    const { other, organization, connection, scope } = await setupWithDomains(env, false);
    const authorizationId = await startedAuthorization(env, connection);
    const failure = await completeSignIn(scope, connection, authorizationId, identity(`eve@${other}`)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(SsoFailure);
    expect((failure as SsoFailure).reason).toBe('domain_not_allowed');
    expect((failure as SsoFailure).message).toContain("connection's domains");
    expect(await env.deps.db.select().from(users).where(eq(users.environmentId, env.environmentId))).toHaveLength(0);
    expect(await membersOf(env, organization.id)).toHaveLength(0);
  });

  it('when the organization allows profiles outside, the address signs in unvouched (e-mail not verified)', async () => {
    const env = await newEnvironment();
    const { other, connection, scope } = await setupWithDomains(env, true);
    const authorizationId = await startedAuthorization(env, connection);
    await completeSignIn(scope, connection, authorizationId, identity(`eve@${other}`));
    const [user] = await env.deps.db.select().from(users).where(eq(users.environmentId, env.environmentId));
    expect(user).toMatchObject({ email: `eve@${other}`, emailVerified: false });
  });
});
