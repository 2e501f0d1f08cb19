import { randomBytes } from 'node:crypto';
import {
  adminTokens,
  consoleSessions,
  newId,
  portalLinks,
  portalSessions,
  sessionChallenges,
  sessions,
} from '@atrium/db';
import { EXPIRED_RECORD_GRACE_MS } from '@atrium/routers';
import { retentionSweep } from '@atrium/server';
import { inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { makeMember, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment } from '../helpers/world.ts';

// The retention worker's sweep purges every short-lived table (portal links and sessions, console
// sessions, session challenges) once a row is a day past its expiry, and keeps every other row.

const hash = () => randomBytes(32).toString('hex');

describe('the retention sweep', () => {
  it('purges short-lived rows a day past their expiry, and keeps recently expired and live ones', async () => {
    const env = await newEnvironment();
    const db = env.deps.db;
    // A fixed clock: "now" is the sweep's, and every row's expiry is relative to it.
    const now = new Date();
    const clock = { ...env.deps, now: () => now };
    const at = (ms: number) => new Date(now.getTime() + ms);
    const ages = {
      gone: at(-EXPIRED_RECORD_GRACE_MS - 60_000), // expired more than a day ago
      grace: at(-EXPIRED_RECORD_GRACE_MS + 60_000), // expired, within the grace
      live: at(10 * 60_000), // not expired
    };
    type Age = keyof typeof ages;
    const AGES = Object.keys(ages) as Age[];

    const organizationId = await makeOrganization(env);
    const userId = await makeMember(env, organizationId);
    const sessionId = newId('session');
    await db.insert(sessions).values({
      id: sessionId,
      environmentId: env.environmentId,
      userId,
      organizationId,
      expiresAt: at(3_600_000),
    });
    const adminTokenId = newId('adminToken');
    await db.insert(adminTokens).values({ id: adminTokenId, tokenHash: hash() });

    const ids: Record<string, Record<Age, string>> = {};
    const record = (table: string, age: Age, id: string) => {
      ids[table] ??= {} as Record<Age, string>;
      (ids[table] as Record<Age, string>)[age] = id;
      return id;
    };
    for (const age of AGES) {
      const expiresAt = ages[age];
      const portal = { environmentId: env.environmentId, organizationId, intent: 'sso' as const, expiresAt };
      const createdAt = new Date(expiresAt.getTime() - 5 * 60_000);
      await db
        .insert(portalLinks)
        .values({ id: record('portal_links', age, newId('portalLink')), secretHash: hash(), createdAt, ...portal });
      await db.insert(portalSessions).values({
        id: record('portal_sessions', age, newId('portalSession')),
        secretHash: hash(),
        createdAt,
        ...portal,
      });
      await db.insert(consoleSessions).values({
        id: record('console_sessions', age, newId('consoleSession')),
        tokenHash: hash(),
        adminTokenId,
        createdAt,
        expiresAt,
      });
      await db.insert(sessionChallenges).values({
        id: record('session_challenges', age, newId('sessionChallenge')),
        environmentId: env.environmentId,
        userId,
        sessionId,
        purpose: 'identity',
        secretHash: hash(),
        createdAt,
        expiresAt,
      });
    }

    const purged = await retentionSweep(clock);
    for (const table of Object.keys(ids)) expect(purged[table]).toBeGreaterThanOrEqual(1);

    const tables = {
      portal_links: portalLinks,
      portal_sessions: portalSessions,
      console_sessions: consoleSessions,
      session_challenges: sessionChallenges,
    };
    const remaining: Record<string, { id: string }[]> = {};
    for (const [name, table] of Object.entries(tables)) {
      const mine = Object.values(ids[name] ?? {});
      remaining[name] = await db.select({ id: table.id }).from(table).where(inArray(table.id, mine));
    }
    for (const [table, byAge] of Object.entries(ids)) {
      const kept = (remaining[table] ?? []).map((r) => r.id).sort();
      expect(kept, table).toEqual([byAge.grace, byAge.live].sort());
    }
  });
});
