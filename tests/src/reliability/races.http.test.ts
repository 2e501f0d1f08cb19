import {
  events,
  groupMemberships,
  invitations,
  itContacts,
  organizationApiKeys,
  organizationDomains,
  organizationMemberships,
  sessions,
  users,
} from '@atrium/db';
import { and, count, eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { type HttpResponse, newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';
import { makeFixture, snapshot, uniqueEmail } from './catalog.ts';

/** Concurrent requests per race (50–200 per the issue; RACE_CONCURRENCY overrides). */
const N = Number(process.env.RACE_CONCURRENCY ?? 50);

interface Race {
  name: string;
  /** Why the row is not run yet (the endpoint lives on another branch). */
  todo?: string;
  /** Prepares what the racers share; returns a context. */
  setup: (env: TestEnvironment) => Promise<Record<string, any>>;
  /** The i-th racer's request. */
  fire: (env: TestEnvironment, ctx: Record<string, any>, i: number) => Promise<HttpResponse>;
  /** Success status of the winner, and the contract's codes a loser may answer. */
  win: number;
  /** How many winners there must be (default exactly one). */
  winners?: (ctx: Record<string, any>) => number | 'any';
  loser: { status: number[]; codes: string[] };
  /** What must hold in the database afterwards. */
  verify: (env: TestEnvironment, ctx: Record<string, any>, responses: HttpResponse[]) => Promise<void>;
}

async function domainRows(env: TestEnvironment, domain: string) {
  return env.deps.db
    .select()
    .from(organizationDomains)
    .where(and(eq(organizationDomains.environmentId, env.environmentId), eq(organizationDomains.domain, domain)));
}

async function memberAddedEvents(env: TestEnvironment): Promise<number> {
  const [row] = await env.deps.db
    .select({ n: count() })
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'group.member_added')));
  return Number(row?.n ?? 0);
}

const RACES: Race[] = [
  {
    name: 'concurrent creates of one external_id',
    setup: async () => ({ externalId: `ext-${Date.now()}` }),
    fire: (env, ctx, i) => env.http.post('/organizations', { name: `Racer ${i}`, external_id: ctx.externalId }),
    win: 201,
    loser: { status: [409], codes: ['external_id_already_used'] },
    verify: async (env, ctx) => {
      const found = await env.http.get(`/organizations/external_id/${ctx.externalId}`);
      expect(found.status).toBe(200);
      const list = await env.http.get('/organizations?limit=100');
      expect(list.body.data).toHaveLength(1);
    },
  },
  {
    name: 'concurrent creates of one domain in one organization',
    setup: async (env) => ({
      organizationId: (await env.http.post('/organizations', { name: 'Target' })).body.id,
      domain: uniqueDomain('race'),
    }),
    fire: (env, ctx) =>
      env.http.post('/organization_domains', { organization_id: ctx.organizationId, domain: ctx.domain }),
    win: 201,
    loser: { status: [409], codes: ['domain_already_exists'] },
    verify: async (env, ctx) => {
      expect(await domainRows(env, ctx.domain)).toHaveLength(1);
    },
  },
  {
    name: 'organizations adding one domain through domain_data concurrently',
    setup: async () => ({ domain: uniqueDomain('dd') }),
    fire: (env, ctx, i) =>
      env.http.post('/organizations', { name: `DD ${i}`, domain_data: [{ domain: ctx.domain, state: 'pending' }] }),
    win: 201,
    // Pending claims by several organizations are allowed (a squatter cannot block the owner).
    winners: () => 'any',
    loser: { status: [], codes: [] },
    verify: async (env, ctx) => {
      expect(await domainRows(env, ctx.domain)).toHaveLength(N);
    },
  },
  {
    name: 'organizations verifying one domain concurrently',
    setup: async (env) => {
      const organizationIds: string[] = [];
      for (let i = 0; i < N; i++)
        organizationIds.push((await env.http.post('/organizations', { name: `V ${i}` })).body.id);
      return { organizationIds, domain: uniqueDomain('verify') };
    },
    fire: (env, ctx, i) =>
      env.http.put(`/organizations/${ctx.organizationIds[i]}`, {
        domain_data: [{ domain: ctx.domain, state: 'verified' }],
      }),
    win: 200,
    loser: { status: [409], codes: ['domain_verified_by_other_organization'] },
    verify: async (env, ctx) => {
      const rows = await domainRows(env, ctx.domain);
      expect(rows.filter((r) => r.state === 'verified')).toHaveLength(1);
    },
  },
  {
    name: 'an organization deleted while its domains are written',
    setup: async (env) => ({
      organizationId: (
        await env.http.post('/organizations', {
          name: 'Doomed',
          domain_data: [{ domain: uniqueDomain('doomed'), state: 'pending' }],
        })
      ).body.id,
    }),
    fire: (env, ctx, i) => {
      if (i === Math.floor(N / 2)) return env.http.delete(`/organizations/${ctx.organizationId}`);
      if (i % 2 === 0)
        return env.http.post('/organization_domains', {
          organization_id: ctx.organizationId,
          domain: uniqueDomain('w'),
        });
      return env.http.put(`/organizations/${ctx.organizationId}`, {
        domain_data: [{ domain: uniqueDomain('u'), state: i % 3 === 0 ? 'verified' : 'pending' }],
      });
    },
    win: 204,
    // Never a foreign-key `conflict`: a write that lost to the delete answers 404.
    loser: { status: [200, 201, 404, 409], codes: ['entity_not_found', 'domain_verified_by_other_organization'] },
    verify: async (env, ctx) => {
      expect((await env.http.get(`/organizations/${ctx.organizationId}`)).status).toBe(404);
      const orphans = await env.deps.db
        .select()
        .from(organizationDomains)
        .where(eq(organizationDomains.organizationId, ctx.organizationId));
      expect(orphans).toEqual([]);
    },
  },
  {
    name: 'one membership added to one group concurrently',
    setup: async (env) => {
      const f = await makeFixture(env);
      return { f, eventsBefore: await memberAddedEvents(env) };
    },
    fire: (env, ctx) =>
      env.http.post(`/organizations/${ctx.f.organizationId}/groups/${ctx.f.groupId}/organization-memberships`, {
        organization_membership_id: ctx.f.spareMembershipId,
      }),
    // Adding is idempotent: every racer succeeds, and there is exactly one link.
    win: 200,
    winners: () => N,
    loser: { status: [], codes: [] },
    verify: async (env, ctx) => {
      const links = await env.deps.db
        .select()
        .from(groupMemberships)
        .where(
          and(
            eq(groupMemberships.groupId, ctx.f.groupId),
            eq(groupMemberships.organizationMembershipId, ctx.f.spareMembershipId),
          ),
        );
      expect(links).toHaveLength(1);
      // … and exactly one group.member_added event for it.
      expect(await memberAddedEvents(env)).toBe(ctx.eventsBefore + 1);
    },
  },
  {
    name: 'a membership deleted while it is added to groups',
    setup: async (env) => {
      const f = await makeFixture(env);
      const groupIds: string[] = [];
      for (let i = 0; i < 5; i++)
        groupIds.push((await env.http.post(`/organizations/${f.organizationId}/groups`, { name: `G${i}` })).body.id);
      return { f, groupIds };
    },
    fire: (env, ctx, i) => {
      if (i === Math.floor(N / 2))
        return env.http.delete(`/user_management/organization_memberships/${ctx.f.spareMembershipId}`);
      return env.http.post(
        `/organizations/${ctx.f.organizationId}/groups/${ctx.groupIds[i % ctx.groupIds.length]}/organization-memberships`,
        { organization_membership_id: ctx.f.spareMembershipId },
      );
    },
    win: 204,
    loser: { status: [200, 404], codes: ['entity_not_found'] },
    verify: async (env, ctx) => {
      // No group link to the deleted membership survives.
      const orphans = await env.deps.db
        .select()
        .from(groupMemberships)
        .where(eq(groupMemberships.organizationMembershipId, ctx.f.spareMembershipId));
      expect(orphans).toEqual([]);
      const get = await env.http.get(`/user_management/organization_memberships/${ctx.f.spareMembershipId}`);
      expect(get.status).toBe(404);
    },
  },
  {
    name: 'concurrent creates of one user e-mail (in varying case)',
    setup: async () => ({ email: uniqueEmail('race') }),
    fire: (env, ctx, i) =>
      env.http.post('/user_management/users', {
        email: i % 2 === 0 ? ctx.email : ctx.email.toUpperCase(),
        first_name: `Racer ${i}`,
      }),
    win: 201,
    loser: { status: [409], codes: ['email_not_available'] },
    verify: async (env, ctx) => {
      const rows = await env.deps.db
        .select()
        .from(users)
        .where(
          and(eq(users.environmentId, env.environmentId), sql`lower(${users.email}) = ${ctx.email.toLowerCase()}`),
        );
      expect(rows).toHaveLength(1);
    },
  },
  {
    name: 'concurrent creates of one IT contact e-mail in one organization (in varying case)',
    setup: async (env) => ({
      organizationId: (await env.http.post('/organizations', { name: 'Target' })).body.id,
      email: uniqueEmail('it'),
    }),
    fire: (env, ctx, i) =>
      env.http.post(`/organizations/${ctx.organizationId}/it_contacts`, {
        email: i % 2 === 0 ? ctx.email : ctx.email.toUpperCase(),
      }),
    win: 201,
    loser: { status: [409], codes: ['it_contact_already_exists'] },
    verify: async (env) => {
      const rows = await env.deps.db.select().from(itContacts).where(eq(itContacts.environmentId, env.environmentId));
      expect(rows).toHaveLength(1);
    },
  },
  {
    name: 'concurrent validations of one organization API key change nothing while the key is deleted',
    setup: async (env) => {
      const org = (await env.http.post('/organizations', { name: 'Target' })).body.id;
      const key = (await env.http.post(`/organizations/${org}/api_keys`, { name: 'k' })).body;
      return { key };
    },
    // The last racer deletes the key; every other validates it, before or after.
    fire: (env, ctx, i) =>
      i === N - 1
        ? env.http.delete(`/api_keys/${ctx.key.id}`)
        : env.http.post('/api_keys/validations', { value: ctx.key.value }),
    win: 200,
    winners: () => N - 1,
    loser: { status: [204], codes: [] },
    verify: async (env, ctx, responses) => {
      for (const res of responses.slice(0, -1)) {
        expect(res.body.api_key === null || res.body.api_key.id === ctx.key.id).toBe(true);
        if (res.body.api_key) expect(res.body.api_key.last_used_at).toBeNull();
      }
      expect(responses.at(-1)?.status).toBe(204);
      const rows = await env.deps.db
        .select()
        .from(organizationApiKeys)
        .where(eq(organizationApiKeys.environmentId, env.environmentId));
      expect(rows).toEqual([]);
      const revoked = await env.deps.db
        .select()
        .from(events)
        .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'api_key.revoked')));
      expect(revoked).toHaveLength(1);
      expect(revoked[0]?.data).toMatchObject({ id: ctx.key.id, last_used_at: null, updated_at: ctx.key.updated_at });
    },
  },
  {
    name: 'concurrent creates of one user external_id',
    setup: async () => ({ externalId: `user-ext-${Date.now()}` }),
    fire: (env, ctx, i) =>
      env.http.post('/user_management/users', { email: uniqueEmail(`ext${i}`), external_id: ctx.externalId }),
    win: 201,
    loser: { status: [409], codes: ['external_id_already_used'] },
    verify: async (env, ctx) => {
      const rows = await env.deps.db
        .select()
        .from(users)
        .where(and(eq(users.environmentId, env.environmentId), eq(users.externalId, ctx.externalId)));
      expect(rows).toHaveLength(1);
    },
  },
  {
    name: 'concurrent creates of one organization membership (same user and organization)',
    setup: async (env) => makeFixture(env).then((f) => ({ f })),
    fire: (env, ctx) =>
      env.http.post('/user_management/organization_memberships', {
        user_id: ctx.f.spareUserId,
        organization_id: ctx.f.organizationId,
      }),
    win: 201,
    loser: { status: [409], codes: ['organization_membership_already_exists'] },
    verify: async (env, ctx) => {
      const rows = await env.deps.db
        .select()
        .from(organizationMemberships)
        .where(
          and(
            eq(organizationMemberships.organizationId, ctx.f.organizationId),
            eq(organizationMemberships.userId, ctx.f.spareUserId),
          ),
        );
      expect(rows).toHaveLength(1);
    },
  },
  {
    name: 'concurrent accepts of one invitation (the user and the membership are made once)',
    setup: async (env) => {
      const organization = await env.http.post('/organizations', { name: 'Invited' });
      const email = uniqueEmail('race-invitee');
      const invitation = await env.http.post('/user_management/invitations', {
        email,
        organization_id: organization.body.id,
      });
      return { organizationId: organization.body.id, email, invitationId: invitation.body.id };
    },
    fire: (env, ctx) => env.http.post(`/user_management/invitations/${ctx.invitationId}/accept`, {}),
    win: 200,
    loser: { status: [400], codes: ['invitation_already_accepted'] },
    verify: async (env, ctx, responses) => {
      const memberships = await env.deps.db
        .select()
        .from(organizationMemberships)
        .where(
          and(
            eq(organizationMemberships.environmentId, env.environmentId),
            eq(organizationMemberships.organizationId, ctx.organizationId),
          ),
        );
      expect(memberships).toHaveLength(1);
      const made = await env.deps.db
        .select()
        .from(users)
        .where(and(eq(users.environmentId, env.environmentId), eq(users.email, ctx.email)));
      expect(made.map((u) => u.id)).toEqual([memberships[0]?.userId]);
      const [row] = await env.deps.db.select().from(invitations).where(eq(invitations.id, ctx.invitationId));
      expect(row).toMatchObject({ state: 'accepted', acceptedUserId: memberships[0]?.userId });
      const winner = responses.find((r) => r.status === 200);
      expect(winner?.body.accepted_user_id).toBe(memberships[0]?.userId);
      const [accepted] = await env.deps.db
        .select({ n: count() })
        .from(events)
        .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'invitation.accepted')));
      expect(Number(accepted?.n)).toBe(1);
    },
  },
  {
    name: 'concurrent accepts of invitations of one new e-mail into many organizations (one user, a membership each)',
    setup: async (env) => {
      const email = uniqueEmail('race-many');
      const invitationIds: string[] = [];
      for (let i = 0; i < N; i++) {
        const organization = await env.http.post('/organizations', { name: `Inviting ${i}` });
        const invitation = await env.http.post('/user_management/invitations', {
          email,
          organization_id: organization.body.id,
        });
        invitationIds.push(invitation.body.id);
      }
      return { email, invitationIds };
    },
    fire: (env, ctx, i) => env.http.post(`/user_management/invitations/${ctx.invitationIds[i]}/accept`, {}),
    win: 200,
    winners: () => N,
    loser: { status: [], codes: [] },
    verify: async (env, ctx, responses) => {
      const made = await env.deps.db
        .select()
        .from(users)
        .where(and(eq(users.environmentId, env.environmentId), eq(users.email, ctx.email)));
      expect(made).toHaveLength(1);
      expect(new Set(responses.map((r) => r.body.accepted_user_id))).toEqual(new Set([made[0]?.id]));
      const memberships = await env.deps.db
        .select()
        .from(organizationMemberships)
        .where(
          and(
            eq(organizationMemberships.environmentId, env.environmentId),
            eq(organizationMemberships.userId, made[0]?.id as string),
          ),
        );
      expect(memberships).toHaveLength(N);
    },
  },
  {
    name: 'a user deleted while memberships and client tokens are made for them',
    setup: async (env) => {
      const f = await makeFixture(env);
      const organizationIds: string[] = [];
      for (let i = 0; i < 8; i++)
        organizationIds.push((await env.http.post('/organizations', { name: `U${i}` })).body.id);
      return { f, organizationIds };
    },
    fire: (env, ctx, i) => {
      if (i === Math.floor(N / 2)) return env.http.delete(`/user_management/users/${ctx.f.userId}`);
      if (i % 3 === 0)
        return env.http.post('/client/token', { organization_id: ctx.f.organizationId, user_id: ctx.f.userId });
      if (i % 3 === 1)
        return env.http.post('/user_management/organization_memberships', {
          user_id: ctx.f.userId,
          organization_id: ctx.organizationIds[i % ctx.organizationIds.length],
        });
      return env.http.put(`/user_management/users/${ctx.f.userId}`, { first_name: `Renamed ${i}` });
    },
    win: 204,
    loser: {
      status: [200, 201, 404, 409, 422],
      codes: ['entity_not_found', 'organization_membership_already_exists', 'organization_membership_required'],
    },
    verify: async (env, ctx) => {
      expect((await env.http.get(`/user_management/users/${ctx.f.userId}`)).status).toBe(404);
      const memberships = await env.deps.db
        .select()
        .from(organizationMemberships)
        .where(eq(organizationMemberships.userId, ctx.f.userId));
      expect(memberships).toEqual([]);
      expect(await env.deps.db.select().from(sessions).where(eq(sessions.userId, ctx.f.userId))).toEqual([]);
      const links = await env.deps.db
        .select()
        .from(groupMemberships)
        .where(eq(groupMemberships.organizationMembershipId, ctx.f.membershipId));
      expect(links).toEqual([]);
    },
  },
  {
    name: 'a group deleted while memberships are added to it',
    setup: async (env) => {
      const f = await makeFixture(env);
      const membershipIds: string[] = [f.spareMembershipId];
      for (let i = 0; i < 5; i++) {
        const user = (await env.http.post('/user_management/users', { email: uniqueEmail('g') })).body.id;
        membershipIds.push(
          (
            await env.http.post('/user_management/organization_memberships', {
              user_id: user,
              organization_id: f.organizationId,
            })
          ).body.id,
        );
      }
      return { f, membershipIds };
    },
    fire: (env, ctx, i) => {
      const group = `/organizations/${ctx.f.organizationId}/groups/${ctx.f.groupId}`;
      if (i === Math.floor(N / 2)) return env.http.delete(group);
      return env.http.post(`${group}/organization-memberships`, {
        organization_membership_id: ctx.membershipIds[i % ctx.membershipIds.length],
      });
    },
    win: 204,
    loser: { status: [200, 404], codes: ['entity_not_found'] },
    verify: async (env, ctx) => {
      expect(
        await env.deps.db.select().from(groupMemberships).where(eq(groupMemberships.groupId, ctx.f.groupId)),
      ).toEqual([]);
    },
  },
  {
    name: 'webhook endpoints deleted while writes queue deliveries to them',
    setup: async (env) => {
      const endpointIds: string[] = [];
      for (let i = 0; i < Math.ceil(N / 10); i++)
        endpointIds.push(
          (await env.http.post('/webhook_endpoints', { endpoint_url: `https://hooks.example.com/${i}`, events: ['*'] }))
            .body.id,
        );
      return { endpointIds };
    },
    fire: (env, ctx, i) => {
      // A write of an unrelated resource must never fail because an endpoint went away.
      if (i % 10 === 0) return env.http.delete(`/webhook_endpoints/${ctx.endpointIds[i / 10]}`);
      return env.http.post('/organizations', { name: `Hooked ${i}` });
    },
    win: 201,
    winners: () => N - Math.ceil(N / 10),
    loser: { status: [204], codes: [] },
    verify: async (env) => {
      const s = await snapshot(env);
      expect(s.organizations).toBe(N - Math.ceil(N / 10));
      expect(s.webhook_endpoints).toBe(0);
    },
  },
  // Webhook endpoints have no uniqueness rule (two endpoints may share a URL, as upstream):
  // concurrent creates all succeed, one row each.
  {
    name: 'concurrent creates of webhook endpoints with one URL',
    setup: async (env) => ({ before: (await snapshot(env)).webhook_endpoints }),
    fire: (env) =>
      env.http.post('/webhook_endpoints', { endpoint_url: 'https://hooks.example.com/race', events: ['*'] }),
    win: 201,
    winners: () => N,
    loser: { status: [], codes: [] },
    verify: async (env, ctx, responses) => {
      expect(new Set(responses.map((r) => r.body.id)).size).toBe(N);
      expect((await snapshot(env)).webhook_endpoints).toBe(ctx.before + N);
    },
  },
];

const stats = { races: 0, requests: 0, fiveXx: 0 };
afterAll(() => {
  console.info(`[reliability] races: ${stats.races} races, ${stats.requests} requests, ${stats.fiveXx} 5xx`);
});

describe.each(RACES)('race: $name', (race) => {
  const run = race.todo ? it.todo : it;
  run(
    `${N} concurrent requests: ${race.winners ? 'winners' : 'exactly one winner'}, contract answers, zero 5xx`,
    async () => {
      const env = await newEnvironment();
      const ctx = await race.setup(env);
      const responses = await Promise.all(Array.from({ length: N }, (_, i) => race.fire(env, ctx, i)));
      const fives = responses.filter((r) => r.status >= 500);
      stats.races += 1;
      stats.requests += responses.length;
      stats.fiveXx += fives.length;
      expect(fives.map((r) => r.text)).toEqual([]);
      const winners = responses.filter((r) => r.status === race.win);
      const expected = race.winners?.(ctx) ?? 1;
      if (expected === 'any') expect(winners.length).toBeGreaterThanOrEqual(1);
      else expect(winners).toHaveLength(expected);
      for (const loser of responses.filter((r) => r.status !== race.win)) {
        expect(race.loser.status).toContain(loser.status);
        if (race.loser.codes.length > 0 && loser.status >= 400) expect(race.loser.codes).toContain(loser.body.code);
        if (loser.status >= 400)
          expect(loser.body).toEqual(
            expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
          );
      }
      await race.verify(env, ctx, responses);
    },
  );
});
