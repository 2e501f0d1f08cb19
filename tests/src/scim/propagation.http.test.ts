// A provisioned user follows its directory user: when the identity provider changes the names or
// the e-mail (PUT or PATCH), the Atrium user changes too (`user.updated`); an e-mail another user
// of the environment has is not taken (the user keeps its own, and the log says why).
import { directoryUsers, users } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventNamesSince, storedEventData, storedEvents } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { getWorld } from '../helpers/world.ts';
import { newDirectory, PATCH_OP, scimUser } from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));
afterEach(() => vi.restoreAllMocks());

async function provisioned(d: Awaited<ReturnType<typeof newDirectory>>, body: Record<string, unknown>) {
  const res = await d.scim.post(`${d.base}/Users`, body);
  expect(res.status).toBe(201);
  const [row] = await d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.id, res.body.id));
  expect(row?.userId).toMatch(/^user_/);
  return { id: res.body.id as string, userId: row?.userId as string };
}

async function atriumUser(d: Awaited<ReturnType<typeof newDirectory>>, id: string) {
  const [row] = await d.env.deps.db.select().from(users).where(eq(users.id, id));
  return row;
}

describe('a provisioned user follows its directory user', () => {
  it('PUT with new names and e-mail: the user takes them, user.updated carries them', async () => {
    const d = await newDirectory();
    const email = uniqueEmail('ada');
    const body = scimUser({ userName: email, emails: [{ primary: true, value: email, type: 'work' }] });
    const { id, userId } = await provisioned(d, body);
    const after = (await storedEvents(d.env)).length;
    const newEmail = uniqueEmail('ada.lovelace');
    const res = await d.scim.put(`${d.base}/Users/${id}`, {
      ...body,
      name: { givenName: 'Augusta', familyName: 'King' },
      emails: [{ primary: true, value: newEmail, type: 'work' }],
    });
    expect(res.status).toBe(200);
    expect(await atriumUser(d, userId)).toMatchObject({ firstName: 'Augusta', lastName: 'King', email: newEmail });
    expect(await eventNamesSince(d.env, after)).toEqual(['user.updated', 'dsync.user.updated']);
    const [updated] = await storedEventData(d.env, 'user.updated');
    expect(updated).toMatchObject({ id: userId, first_name: 'Augusta', last_name: 'King', email: newEmail });
  });

  it('PATCH of name.givenName: the user follows; a change the user does not show records no user.updated', async () => {
    const d = await newDirectory();
    const { id, userId } = await provisioned(d, scimUser());
    const after = (await storedEvents(d.env)).length;
    const patch = (Operations: unknown[]) => d.scim.patch(`${d.base}/Users/${id}`, { schemas: [PATCH_OP], Operations });
    expect((await patch([{ op: 'replace', path: 'name.givenName', value: 'Grace' }])).status).toBe(200);
    expect(await atriumUser(d, userId)).toMatchObject({ firstName: 'Grace', lastName: 'Lovelace' });
    expect(await eventNamesSince(d.env, after)).toEqual(['user.updated', 'dsync.user.updated']);
    const next = (await storedEvents(d.env)).length;
    expect((await patch([{ op: 'add', path: 'title', value: 'Engineer' }])).status).toBe(200);
    expect(await eventNamesSince(d.env, next)).toEqual(['dsync.user.updated']);
  });

  it('an e-mail another user has is not taken: the user keeps its own, the names follow, the log says why', async () => {
    const d = await newDirectory();
    const { id, userId } = await provisioned(d, scimUser());
    const before = await atriumUser(d, userId);
    const taken = uniqueEmail('taken');
    const other = await d.env.http.post('/user_management/users', { email: taken });
    expect(other.status).toBe(201);
    const warn = vi.spyOn(d.env.deps.log, 'warn');
    const res = await d.scim.patch(`${d.base}/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'replace', path: 'emails[type eq "work"].value', value: taken },
        { op: 'replace', path: 'name.familyName', value: 'Byron' },
      ],
    });
    expect(res.status).toBe(200);
    const [row] = await d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.id, id));
    expect(row?.email).toBe(taken);
    expect(await atriumUser(d, userId)).toMatchObject({ email: before?.email, lastName: 'Byron' });
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ userId, directoryUserId: id }),
      expect.stringContaining('another user of the environment has it'),
    );
    // The other user is untouched.
    expect((await atriumUser(d, other.body.id))?.email).toBe(taken);
  });
});
