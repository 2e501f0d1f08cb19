import { groupMemberships, newId, organizationMemberships, users } from '@atrium/db';
import { beforeAll, describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment } from './helpers/world.ts';

const TOTAL = 250;
const LIMIT = 7;

interface Page {
  data: { id: string }[];
  list_metadata: { before: string | null; after: string | null };
}

describe('a group with 250 memberships, walked with limit=7', () => {
  let env: TestEnvironment;
  let path: string;
  let ids: string[];

  beforeAll(async () => {
    env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Big' });
    const group = await env.caller.groups.create({ organization_id: org.id, name: 'Everyone' });
    // A membership outside the group, which must never show up.
    const outsider = await env.caller.users.create({ email: `outsider-${Date.now()}@example.com` });
    await env.caller.organizationMemberships.create({ user_id: outsider.id, organization_id: org.id });
    // Bulk setup (three statements) keeps the test fast; the walk below is all HTTP.
    const userRows = Array.from({ length: TOTAL }, (_, i) => ({
      id: newId('user'),
      environmentId: env.environmentId,
      email: `member-${i}-${Date.now()}@example.com`,
    }));
    const membershipRows = userRows.map((u) => ({
      id: newId('organizationMembership'),
      environmentId: env.environmentId,
      userId: u.id,
      organizationId: org.id,
    }));
    await env.deps.db.insert(users).values(userRows);
    await env.deps.db.insert(organizationMemberships).values(membershipRows);
    // Links inserted in shuffled order: the list order is the memberships' id order regardless.
    const shuffled = [...membershipRows].sort(() => Math.random() - 0.5);
    await env.deps.db
      .insert(groupMemberships)
      .values(
        shuffled.map((m) => ({ environmentId: env.environmentId, groupId: group.id, organizationMembershipId: m.id })),
      );
    ids = membershipRows.map((m) => m.id).sort();
    path = `/organizations/${org.id}/groups/${group.id}/organization-memberships`;
  });

  async function page(query: string): Promise<Page> {
    const res = await env.http.get<Page>(`${path}?${query}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  it.each(['asc', 'desc'] as const)('order=%s: forward with after, then back with before, exactly', async (order) => {
    const expected = order === 'asc' ? ids : [...ids].reverse();
    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const p: Page = await page(`limit=${LIMIT}&order=${order}${cursor ? `&after=${cursor}` : ''}`);
      pages.push(p);
      cursor = p.list_metadata.after;
    } while (cursor && pages.length < 100);

    expect(pages).toHaveLength(Math.ceil(TOTAL / LIMIT));
    expect(pages.flatMap((p) => p.data.map((m) => m.id))).toEqual(expected);
    pages.forEach((p, i) => {
      const slice = expected.slice(i * LIMIT, (i + 1) * LIMIT);
      expect(p.data.map((m) => m.id)).toEqual(slice);
      expect(p.list_metadata.before).toBe(i === 0 ? null : slice[0]);
      expect(p.list_metadata.after).toBe(i === pages.length - 1 ? null : slice[slice.length - 1]);
    });

    // Backwards from the last page's first item, with `before`, to the start.
    const back: string[][] = [];
    let before: string | null = pages[pages.length - 1]?.list_metadata.before ?? null;
    while (before && back.length < 100) {
      const p: Page = await page(`limit=${LIMIT}&order=${order}&before=${before}`);
      back.unshift(p.data.map((m) => m.id));
      before = p.list_metadata.before;
    }
    const lastPage = pages[pages.length - 1]?.data.map((m) => m.id) ?? [];
    expect([...back.flat(), ...lastPage]).toEqual(expected);
  });
});
