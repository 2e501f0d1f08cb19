import { directoryUsers } from '@atrium/db';
import { deactivateDirectory, deleteDirectory, rotateDirectoryToken, scopeOf } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld, HttpClient, newEnvironment } from '../helpers/world.ts';
import { ERROR_SCHEMA, newDirectory, scimClient, scimUser } from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));

const refused = { schemas: [ERROR_SCHEMA], status: '401', detail: expect.any(String) };

describe('SCIM authentication and isolation', () => {
  it('refuses a missing, malformed or unknown token with 401 in SCIM shape, before reading the body', async () => {
    const d = await newDirectory();
    const anonymous = new HttpClient(d.env.world.url, { 'Content-Type': 'application/scim+json' });
    const headerSets: Array<Record<string, string>> = [
      {},
      { Authorization: 'Basic abc' },
      { Authorization: `Bearer ${d.token}x` },
      { Authorization: `Bearer scim_${'A'.repeat(40)}` },
      { Authorization: `Bearer ${d.env.apiKey}` },
    ];
    for (const headers of headerSets) {
      const res = await anonymous.request('POST', `${d.base}/Users`, { body: scimUser(), headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
      expect(res.body).toEqual(refused);
    }
    expect(
      await d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, d.directoryId)),
    ).toHaveLength(0);
  });

  it('a token of directory A cannot read or write directory B (same organization, other organization, other environment): 401', async () => {
    const a = await newDirectory();
    const sameOrg = await newDirectory({ env: a.env, organizationId: a.organizationId });
    const otherOrg = await newDirectory({ env: a.env });
    const otherEnv = await newDirectory({ env: await newEnvironment() });
    for (const b of [sameOrg, otherOrg, otherEnv]) {
      const user = (await b.scim.post(`${b.base}/Users`, scimUser())).body.id;
      const asA = scimClient(b.env, a.token);
      const reads = [
        await asA.get(`${b.base}/Users`),
        await asA.get(`${b.base}/Users/${user}`),
        await asA.get(`${b.base}/Groups`),
        await asA.get(`${b.base}/ServiceProviderConfig`),
      ];
      const writes = [
        await asA.post(`${b.base}/Users`, scimUser()),
        await asA.put(`${b.base}/Users/${user}`, scimUser()),
        await asA.patch(`${b.base}/Users/${user}`, { Operations: [{ op: 'replace', path: 'active', value: false }] }),
        await asA.delete(`${b.base}/Users/${user}`),
      ];
      for (const res of [...reads, ...writes]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(refused);
      }
      const rows = await b.env.deps.db
        .select()
        .from(directoryUsers)
        .where(eq(directoryUsers.directoryId, b.directoryId));
      expect(rows).toHaveLength(1);
      expect(rows[0]?.state).toBe('active');
      // A's own path does not reach B's user either.
      expect((await a.scim.get(`${a.base}/Users/${user}`)).status).toBe(404);
    }
  });

  it('an unknown directory on the path is 401, as another directory is (nothing leaks)', async () => {
    const d = await newDirectory();
    const res = await d.scim.get('/scim/v2/directory_01HXXXXXXXXXXXXXXXXXXXXXXX/Users');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(refused);
  });

  it('a rotated token is refused at once; the new one works', async () => {
    const d = await newDirectory();
    expect((await d.scim.get(`${d.base}/Users`)).status).toBe(200);
    const rotated = await rotateDirectoryToken(await scopeOf(d.env.deps, d.env.environmentId), d.directoryId);
    const old = await d.scim.get(`${d.base}/Users`);
    expect(old.status).toBe(401);
    const fresh = await scimClient(d.env, rotated.bearer_token).get(`${d.base}/Users`);
    expect(fresh.status).toBe(200);
  });

  // The token's lookup is cached (auth/directory-token.ts): each of these uses it first, so the
  // refusal after the change is the cache's forgetting, not a first lookup.
  it("a deactivated or deleted directory's token, and a deleted organization's, are refused at once", async () => {
    const deactivated = await newDirectory();
    const deleted = await newDirectory();
    const orgDeleted = await newDirectory();
    for (const d of [deactivated, deleted, orgDeleted]) {
      expect((await d.scim.post(`${d.base}/Users`, scimUser())).status).toBe(201);
    }
    await deactivateDirectory(
      await scopeOf(deactivated.env.deps, deactivated.env.environmentId),
      deactivated.directoryId,
    );
    await deleteDirectory(await scopeOf(deleted.env.deps, deleted.env.environmentId), deleted.directoryId);
    expect((await orgDeleted.env.http.delete(`/organizations/${orgDeleted.organizationId}`)).status).toBe(204);
    for (const d of [deactivated, deleted, orgDeleted]) {
      const res = await d.scim.post(`${d.base}/Users`, scimUser());
      expect(res.status).toBe(401);
      expect(res.body).toEqual(refused);
      expect((await d.scim.get(`${d.base}/Users`)).status).toBe(401);
    }
    const stored = await deactivated.env.deps.db
      .select()
      .from(directoryUsers)
      .where(eq(directoryUsers.directoryId, deactivated.directoryId));
    expect(stored).toHaveLength(1);
  });

  it('the SCIM token is refused on the REST API and /trpc', async () => {
    const d = await newDirectory();
    const asScim = new HttpClient(d.env.world.url, { Authorization: `Bearer ${d.token}` });
    expect((await asScim.get('/organizations')).status).toBe(401);
    expect((await asScim.get(`/organizations/${d.organizationId}`)).status).toBe(401);
    expect((await asScim.get('/trpc/organizations.list')).status).toBe(401);
  });
});

describe('SCIM and the limits', () => {
  it("counts a SCIM caller against its directory's bucket (the key limit), not its address's", async () => {
    const d = await newDirectory();
    const res = await d.scim.get(`${d.base}/Users`);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-policy')).toBe('6000;w=60');
    const anonymous = await new HttpClient(d.env.world.url).get(`${d.base}/Users`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ratelimit-policy')).toBe('300;w=60');
  });
});
