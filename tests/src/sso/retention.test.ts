import { randomBytes } from 'node:crypto';
import { newId, samlAssertionIds, ssoAccessTokens, ssoAuthorizations, ssoCodes, ssoProfiles } from '@atrium/db';
import { retentionSweep } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEventData } from '../helpers/events.ts';
import { newEnvironment } from '../helpers/world.ts';
import { ssoSetup } from './sign-in.ts';

// The retention sweep's SSO part: started authorizations past their 10 minutes time out (with
// authentication.sso_timed_out); expired codes, access tokens and assertion ids go; finished
// authorizations go a day past their expiry.

beforeAll(async () => {
  await newEnvironment();
}, 120_000);

const hash = () => randomBytes(32).toString('hex');

describe('the retention sweep of SSO rows', () => {
  it('times out expired authorizations and purges expired codes, tokens, assertion ids and old authorizations', async () => {
    const env = await newEnvironment();
    const db = env.deps.db;
    const { connection, organization } = await ssoSetup(env);
    const now = new Date();
    const at = (ms: number) => new Date(now.getTime() + ms);
    const clock = { ...env.deps, now: () => now };

    const authorization = async (state: 'started' | 'successful', expiresAt: Date, loginHint: string | null = null) => {
      const id = newId('ssoAuthorization');
      await db.insert(ssoAuthorizations).values({
        id,
        environmentId: env.environmentId,
        connectionId: connection.id,
        redirectUri: 'https://app.example.com/cb',
        state,
        loginHint,
        expiresAt,
      });
      return id;
    };
    const expired = await authorization('started', at(-1000), 'ada@example.com');
    const live = await authorization('started', at(5 * 60_000));
    const finishedRecently = await authorization('successful', at(-60 * 60_000));
    const finishedLongAgo = await authorization('successful', at(-25 * 60 * 60_000));

    const profileId = newId('ssoProfile');
    await db.insert(ssoProfiles).values({
      id: profileId,
      environmentId: env.environmentId,
      connectionId: connection.id,
      organizationId: organization.id,
      idpId: `idp-${profileId}`,
      email: 'ada@example.com',
    });
    const codes = { gone: hash(), kept: hash() };
    await db.insert(ssoCodes).values([
      { codeHash: codes.gone, environmentId: env.environmentId, profileId, redirectUri: 'x', expiresAt: at(-1000) },
      { codeHash: codes.kept, environmentId: env.environmentId, profileId, redirectUri: 'x', expiresAt: at(60_000) },
    ]);
    const tokens = { gone: hash(), kept: hash() };
    await db.insert(ssoAccessTokens).values([
      { tokenHash: tokens.gone, environmentId: env.environmentId, profileId, expiresAt: at(-1000) },
      { tokenHash: tokens.kept, environmentId: env.environmentId, profileId, expiresAt: at(60 * 60_000) },
    ]);
    await db.insert(samlAssertionIds).values([
      { environmentId: env.environmentId, connectionId: connection.id, assertionId: '_gone', expiresAt: at(-1000) },
      { environmentId: env.environmentId, connectionId: connection.id, assertionId: '_kept', expiresAt: at(60_000) },
    ]);

    const purged = await retentionSweep(clock);
    expect(purged.sso_authorizations_timed_out).toBeGreaterThanOrEqual(1);

    const states = new Map(
      (await db.select().from(ssoAuthorizations).where(eq(ssoAuthorizations.environmentId, env.environmentId))).map(
        (row) => [row.id, row.state],
      ),
    );
    expect(states.get(expired)).toBe('timed_out');
    expect(states.get(live)).toBe('started');
    expect(states.get(finishedRecently)).toBe('successful');
    expect(states.has(finishedLongAgo)).toBe(false);
    const left = async <T extends { [k: string]: unknown }>(rows: Promise<T[]>, key: keyof T) =>
      (await rows).map((row) => row[key]);
    expect(
      await left(db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId)), 'codeHash'),
    ).toEqual([codes.kept]);
    expect(
      await left(
        db.select().from(ssoAccessTokens).where(eq(ssoAccessTokens.environmentId, env.environmentId)),
        'tokenHash',
      ),
    ).toEqual([tokens.kept]);
    expect(
      await left(
        db.select().from(samlAssertionIds).where(eq(samlAssertionIds.environmentId, env.environmentId)),
        'assertionId',
      ),
    ).toEqual(['_kept']);
    expect(await storedEventData(env, 'authentication.sso_timed_out')).toEqual([
      {
        type: 'sso',
        status: 'timed_out',
        ip_address: null,
        user_agent: null,
        user_id: null,
        email: 'ada@example.com',
        sso: { organization_id: organization.id, connection_id: connection.id, session_id: null },
      },
    ]);

    // A second sweep finds nothing more to time out here.
    await retentionSweep(clock);
    expect(await storedEventData(env, 'authentication.sso_timed_out')).toHaveLength(1);
  });
});
