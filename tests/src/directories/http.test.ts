import { directories, directoryGroups, directoryUsers } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { makeOrganization } from '../helpers/tokens.ts';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { makeDirectory, pushGroup, pushUser, warmUp } from './directory-data.ts';

// Upstream's directory-sync REST API (GET/DELETE /directories, GET /directory_users,
// GET /directory_groups): statuses, bodies, filters, pagination, bad input and isolation. Every
// response is also checked against upstream's OpenAPI document (upstream-guard.setup.ts).

beforeAll(warmUp);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const count = async (env: TestEnvironment) => {
  const db = env.deps.db;
  const of = async (table: typeof directories | typeof directoryUsers | typeof directoryGroups) =>
    (await db.select().from(table).where(eq(table.environmentId, env.environmentId))).length;
  return { directories: await of(directories), users: await of(directoryUsers), groups: await of(directoryGroups) };
};

/** A directory with two users (one inactive) and a group holding the first. */
async function populated(env: TestEnvironment, organizationId?: string) {
  const directory = await makeDirectory(env, organizationId ? { organizationId } : {});
  const ada = await pushUser(env, directory.id, { userName: 'ada@example.com', title: 'Engineer' });
  const grace = await pushUser(env, directory.id, {
    userName: 'grace@example.com',
    givenName: 'Grace',
    familyName: 'Hopper',
    active: false,
  });
  const engineering = await pushGroup(env, directory.id, 'Engineering', [ada.id]);
  return { directory, ada, grace, engineering };
}

describe('GET /directories/:id', () => {
  it("answers upstream's Directory: type, state, counts, no token, no domain unless set", async () => {
    const env = await newEnvironment();
    const { directory } = await populated(env);
    const res = await env.http.get(`/directories/${directory.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'directory',
      id: directory.id,
      organization_id: directory.organization_id,
      external_key: directory.external_key,
      type: 'okta scim v2.0',
      // The first write of the identity provider linked it.
      state: 'linked',
      name: 'Acme Okta',
      metadata: { users: { active: 1, inactive: 1 }, groups: 1 },
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(res.text).not.toContain(directory.bearer_token);
    expect(res.text).not.toMatch(/scim_|token/);
  });

  it('shows an unlinked directory (no SCIM write yet) with zero counts, and its domain when given', async () => {
    const env = await newEnvironment();
    const directory = await makeDirectory(env, { domain: 'acme.example.com' });
    const res = await env.http.get(`/directories/${directory.id}`);
    expect(res.body).toMatchObject({
      state: 'unlinked',
      domain: 'acme.example.com',
      metadata: { users: { active: 0, inactive: 0 }, groups: 0 },
    });
  });

  it('is 404 entity_not_found for an unknown id', async () => {
    const env = await newEnvironment();
    const res = await env.http.get('/directories/directory_01NOPE');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'entity_not_found', message: "Directory not found: 'directory_01NOPE'." });
  });
});

describe('GET /directories', () => {
  it('lists newest first with counts, filters by organization, name (search, any case) and domain', async () => {
    const env = await newEnvironment();
    const acme = await makeOrganization(env, 'Acme');
    const globex = await makeOrganization(env, 'Globex');
    const okta = await makeDirectory(env, { organizationId: acme, name: 'Acme Okta', domain: 'acme.example.com' });
    const entra = await makeDirectory(env, { organizationId: acme, name: 'Acme Entra', type: 'azure scim v2.0' });
    const other = await makeDirectory(env, { organizationId: globex, name: 'Globex Okta' });
    await pushUser(env, okta.id, { userName: 'ada@example.com' });

    const all = await env.http.get('/directories');
    expect(all.status).toBe(200);
    expect(all.body.object).toBe('list');
    expect(all.body.data.map((d: { id: string }) => d.id)).toEqual([other.id, entra.id, okta.id]);
    expect(all.body.list_metadata).toEqual({ before: null, after: null });
    expect(all.body.data[2].metadata).toEqual({ users: { active: 1, inactive: 0 }, groups: 0 });

    const ids = async (query: string) =>
      (await env.http.get(`/directories?${query}`)).body.data.map((d: { id: string }) => d.id);
    expect(await ids(`organization_id=${acme}`)).toEqual([entra.id, okta.id]);
    expect(await ids('search=OKTA')).toEqual([other.id, okta.id]);
    expect(await ids(`search=okta&organization_id=${globex}`)).toEqual([other.id]);
    expect(await ids('domain=acme.example.com')).toEqual([okta.id]);
    expect(await ids('search=nothing-like-it')).toEqual([]);
    // An organization of no directory (or of another environment) lists nothing.
    expect(await ids('organization_id=org_01NOPE')).toEqual([]);
    // LIKE's wildcards are text.
    expect(await ids('search=%25')).toEqual([]);
  });

  it('pages by cursor both ways, in either order', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const made = [];
    for (const name of ['One', 'Two', 'Three']) made.push(await makeDirectory(env, { organizationId, name }));
    const [one, two, three] = made.map((d) => d.id) as [string, string, string];

    const first = await env.http.get('/directories?limit=2');
    expect(first.body.data.map((d: { id: string }) => d.id)).toEqual([three, two]);
    expect(first.body.list_metadata).toEqual({ before: null, after: two });
    const second = await env.http.get(`/directories?limit=2&after=${two}`);
    expect(second.body.data.map((d: { id: string }) => d.id)).toEqual([one]);
    expect(second.body.list_metadata).toEqual({ before: one, after: null });
    const back = await env.http.get(`/directories?limit=2&before=${one}`);
    expect(back.body.data.map((d: { id: string }) => d.id)).toEqual([three, two]);

    const asc = await env.http.get('/directories?order=asc&limit=2');
    expect(asc.body.data.map((d: { id: string }) => d.id)).toEqual([one, two]);
    expect(asc.body.list_metadata.after).toBe(two);
  });

  describe.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['order=sideways', 'order'],
    ['after=directory_01A&before=directory_01B', 'before'],
    [`search=${'x'.repeat(257)}`, 'search'],
  ])('bad query %s', (query, field) => {
    it(`is 422 naming ${field}`, async () => {
      const env = await newEnvironment();
      const res = await env.http.get(`/directories?${query}`);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });
});

describe('DELETE /directories/:id', () => {
  it('answers 204 with no body, deletes its users, groups and members, records dsync.deleted, then 404s', async () => {
    const env = await newEnvironment();
    const { directory, ada, engineering } = await populated(env);
    expect(await count(env)).toEqual({ directories: 1, users: 2, groups: 1 });

    const res = await env.http.delete(`/directories/${directory.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await count(env)).toEqual({ directories: 0, users: 0, groups: 0 });
    const deleted = (await storedEvents(env)).filter((e) => e.event === 'dsync.deleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0]?.data).toMatchObject({ object: 'directory', id: directory.id, state: 'deleting' });
    expect(JSON.stringify(deleted[0]?.data)).not.toContain(directory.bearer_token);

    for (const path of [
      `/directories/${directory.id}`,
      `/directory_users/${ada.id}`,
      `/directory_groups/${engineering.id}`,
      `/directory_users?directory=${directory.id}`,
    ]) {
      expect((await env.http.get(path)).status, path).toBe(404);
    }
    const again = await env.http.delete(`/directories/${directory.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('entity_not_found');
  });
});

describe('GET /directory_users', () => {
  it("lists a directory's users with upstream's fields: raw and custom attributes, emails, state, groups", async () => {
    const env = await newEnvironment();
    const { directory, ada, grace, engineering } = await populated(env);
    const res = await env.http.get(`/directory_users?directory=${directory.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((u: { id: string }) => u.id)).toEqual([grace.id, ada.id]);
    const [graceShown, adaShown] = res.body.data;
    expect(adaShown).toEqual({
      object: 'directory_user',
      id: ada.id,
      directory_id: directory.id,
      organization_id: directory.organization_id,
      idp_id: 'ext-ada@example.com',
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      name: 'Ada Lovelace',
      emails: [{ primary: true, type: 'work', value: 'ada@example.com' }],
      job_title: 'Engineer',
      username: 'ada@example.com',
      state: 'active',
      raw_attributes: expect.objectContaining({ userName: 'ada@example.com', title: 'Engineer' }),
      custom_attributes: { job_title: 'Engineer' },
      groups: [
        {
          object: 'directory_group',
          id: engineering.id,
          idp_id: 'ext-Engineering',
          directory_id: directory.id,
          organization_id: directory.organization_id,
          name: 'Engineering',
          raw_attributes: expect.objectContaining({ displayName: 'Engineering' }),
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      ],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(graceShown).toMatchObject({ state: 'inactive', job_title: null, groups: [], name: 'Grace Hopper' });
  });

  it("lists a group's members only, and pages", async () => {
    const env = await newEnvironment();
    const { directory, ada, engineering } = await populated(env);
    const byGroup = await env.http.get(`/directory_users?group=${engineering.id}`);
    expect(byGroup.status).toBe(200);
    expect(byGroup.body.data.map((u: { id: string }) => u.id)).toEqual([ada.id]);
    const page = await env.http.get(`/directory_users?directory=${directory.id}&limit=1&order=asc`);
    expect(page.body.data.map((u: { id: string }) => u.id)).toEqual([ada.id]);
    expect(page.body.list_metadata).toEqual({ before: null, after: ada.id });
  });

  it('refuses a list naming neither a directory nor a group: 422 naming both fields, as upstream', async () => {
    const env = await newEnvironment();
    await populated(env);
    const res = await env.http.get('/directory_users');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      code: 'invalid_request_parameters',
      message: 'Validation failed.',
      errors: [
        { field: 'directory', code: 'directory_required', message: 'Please provide either "directory" or "group".' },
        { field: 'group', code: 'group_required', message: 'Please provide either "directory" or "group".' },
      ],
    });
    // An empty value names nothing either.
    expect((await env.http.get('/directory_users?directory=')).status).toBe(422);
  });

  it('is 404 for a directory or group that does not exist', async () => {
    const env = await newEnvironment();
    for (const query of ['directory=directory_01NOPE', 'group=directory_group_01NOPE']) {
      const res = await env.http.get(`/directory_users?${query}`);
      expect(res.status, query).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
  });

  it('gets one user by id (with groups), and 404s an unknown one', async () => {
    const env = await newEnvironment();
    const { ada, engineering } = await populated(env);
    const res = await env.http.get(`/directory_users/${ada.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ada.id, email: 'ada@example.com', state: 'active' });
    expect(res.body.groups.map((g: { id: string }) => g.id)).toEqual([engineering.id]);
    const missing = await env.http.get('/directory_users/directory_user_01NOPE');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe("Directory user not found: 'directory_user_01NOPE'.");
  });
});

describe('GET /directory_groups', () => {
  it("lists a directory's groups, and a user's groups", async () => {
    const env = await newEnvironment();
    const { directory, ada, grace, engineering } = await populated(env);
    const everyone = await pushGroup(env, directory.id, 'Everyone', [ada.id, grace.id]);
    const byDirectory = await env.http.get(`/directory_groups?directory=${directory.id}`);
    expect(byDirectory.status).toBe(200);
    expect(byDirectory.body.object).toBe('list');
    expect(byDirectory.body.data.map((g: { id: string }) => g.id)).toEqual([everyone.id, engineering.id]);
    expect(byDirectory.body.data[1]).toEqual({
      object: 'directory_group',
      id: engineering.id,
      idp_id: 'ext-Engineering',
      directory_id: directory.id,
      organization_id: directory.organization_id,
      name: 'Engineering',
      raw_attributes: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Engineering' },
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const ofGrace = await env.http.get(`/directory_groups?user=${grace.id}`);
    expect(ofGrace.body.data.map((g: { id: string }) => g.id)).toEqual([everyone.id]);
    const ofAda = await env.http.get(`/directory_groups?user=${ada.id}&order=asc`);
    expect(ofAda.body.data.map((g: { id: string }) => g.id)).toEqual([engineering.id, everyone.id]);
  });

  it('refuses a list naming neither a directory nor a user (422), and 404s unknown ones', async () => {
    const env = await newEnvironment();
    const res = await env.http.get('/directory_groups?limit=5');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { field: 'directory', code: 'directory_required', message: 'Please provide either "directory" or "user".' },
      { field: 'user', code: 'user_required', message: 'Please provide either "directory" or "user".' },
    ]);
    expect((await env.http.get('/directory_groups?user=directory_user_01NOPE')).status).toBe(404);
    expect((await env.http.get('/directory_groups?directory=directory_01NOPE')).status).toBe(404);
  });

  it('gets one group by id, and 404s an unknown one', async () => {
    const env = await newEnvironment();
    const { engineering } = await populated(env);
    const res = await env.http.get(`/directory_groups/${engineering.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'directory_group', id: engineering.id, name: 'Engineering' });
    expect((await env.http.get('/directory_groups/directory_group_01NOPE')).status).toBe(404);
  });
});

describe('isolation and authentication', () => {
  it("answers 404 for another environment's directory, users and groups, in paths and filters, and deletes nothing", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const { directory, ada, engineering } = await populated(other);
    const before = await count(other);
    for (const [method, path] of [
      ['GET', `/directories/${directory.id}`],
      ['DELETE', `/directories/${directory.id}`],
      ['GET', `/directory_users/${ada.id}`],
      ['GET', `/directory_groups/${engineering.id}`],
      ['GET', `/directory_users?directory=${directory.id}`],
      ['GET', `/directory_users?group=${engineering.id}`],
      ['GET', `/directory_groups?directory=${directory.id}`],
      ['GET', `/directory_groups?user=${ada.id}`],
    ] as const) {
      const res = await env.http.request(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
    // Nor is it listed, even by its organization's id.
    expect((await env.http.get('/directories')).body.data).toEqual([]);
    expect((await env.http.get(`/directories?organization_id=${directory.organization_id}`)).body.data).toEqual([]);
    expect(await count(other)).toEqual(before);
    expect((await other.http.get(`/directories/${directory.id}`)).status).toBe(200);
  });

  it('refuses a missing key, a wrong key, and the SCIM bearer token (401): it authenticates only SCIM', async () => {
    const env = await newEnvironment();
    const { directory } = await populated(env);
    const url = env.http.baseUrl;
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer sk_test_nope' },
      { Authorization: `Bearer ${directory.bearer_token}` },
    ];
    for (const headers of attempts) {
      for (const path of [
        '/directories',
        `/directories/${directory.id}`,
        `/directory_users?directory=${directory.id}`,
      ]) {
        const res = await new HttpClient(url, headers).get(path);
        expect(res.status, `${JSON.stringify(headers)} ${path}`).toBe(401);
        expect(res.body.code).toBe('unauthorized');
      }
    }
    const refused = await new HttpClient(url, { Authorization: `Bearer ${directory.bearer_token}` }).delete(
      `/directories/${directory.id}`,
    );
    expect(refused.status).toBe(401);
    expect(await count(env)).toMatchObject({ directories: 1 });
  });
});
