import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sessions } from '@atrium/db';
import { openGeoLocator } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { surfaces } from '../helpers/client-surfaces.ts';
import { cityRecord, mmdbOf } from '../helpers/mmdb.ts';
import { freePort, spawnServer } from '../helpers/spawn-server.ts';
import { newEnvironment } from '../helpers/world.ts';
import { anotherToken } from './self-helpers.ts';

/**
 * With a GeoIP city database configured (`GEOIP_DATABASE`), the UserSessions widget, GraphQL and
 * tRPC show where each session's device was ("City, CC"); without one, `currentLocation` is null.
 * The database here is written by the test in MaxMind's format and read by the server's reader.
 */
const dir = mkdtempSync(join(tmpdir(), 'atrium-geoip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function databaseFile(name: string, bytes: Buffer | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

// Loopback stands for Berlin here, so the test's own requests have a place.
const CITY_DB = databaseFile(
  'city.mmdb',
  mmdbOf([
    ['127.0.0.0/8', cityRecord('Berlin', 'DE', 'Germany')],
    ['81.2.69.0/24', cityRecord('London', 'GB', 'United Kingdom')],
    ['203.0.113.0/24', { country: { geoname_id: 3, iso_code: 'AU', names: { en: 'Australia' } } }],
  ]),
);

describe('openGeoLocator', () => {
  it('locates an address by its network; no city, no network or no IP address is null', () => {
    const geo = openGeoLocator(CITY_DB);
    expect(geo.locate('127.0.0.1')).toEqual({ cityName: 'Berlin', countryISOCode: 'DE' });
    expect(geo.locate('81.2.69.142')).toEqual({ cityName: 'London', countryISOCode: 'GB' });
    expect(geo.locate('203.0.113.9')).toBeNull(); // a country without a city
    expect(geo.locate('8.8.8.8')).toBeNull();
    expect(geo.locate('2001:db8::1')).toBeNull(); // an IPv4 database
    expect(geo.locate('not an address')).toBeNull();
  });

  it('refuses at start-up a file that is not a MaxMind DB, or not a City database, naming the setting', () => {
    const garbage = databaseFile('garbage.mmdb', 'GeoLite2 but not really');
    expect(() => openGeoLocator(garbage)).toThrow(`GEOIP_DATABASE ${garbage} is not a readable MaxMind DB file`);
    expect(() => openGeoLocator(join(dir, 'missing.mmdb'))).toThrow(/GEOIP_DATABASE .*missing\.mmdb is not a readable/);
    const country = databaseFile(
      'country.mmdb',
      mmdbOf([['127.0.0.0/8', cityRecord('x', 'DE', 'y')]], 'GeoLite2-Country'),
    );
    expect(() => openGeoLocator(country)).toThrow(
      `GEOIP_DATABASE ${country} is a GeoLite2-Country database; a City database is needed.`,
    );
  });
});

describe('GEOIP_DATABASE at start-up', () => {
  it('a file that is not a City database stops the server, naming the setting, before it opens its data directory', async () => {
    const garbage = databaseFile('not-a-database.mmdb', 'nothing MaxMind about it');
    const dataDir = join(dir, 'data');
    const started = await spawnServer({ ATRIUM_DATA_DIR: dataDir, GEOIP_DATABASE: garbage }, await freePort()).then(
      async (server) => {
        server.child.kill('SIGKILL');
        return `it started:\n${server.output()}`;
      },
      (error: Error) => error.message,
    );
    expect(started).toContain('exited early');
    expect(started).toContain(`GEOIP_DATABASE ${garbage} is not a readable MaxMind DB file`);
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});

describe('a session’s location on the client surfaces', () => {
  it('shows "City, CC" for each session whose address the database knows, null for the others', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { kind: 'client' });
    const sid = String(a.claims.sid);
    // Two more sessions of the same user, used from elsewhere (their stored device addresses).
    const london = JSON.parse(atob((await anotherToken(env, a.organizationId, a.userId)).split('.')[1] as string)).sid;
    const unknown = JSON.parse(atob((await anotherToken(env, a.organizationId, a.userId)).split('.')[1] as string)).sid;
    await env.deps.db.update(sessions).set({ ipAddress: '81.2.69.142' }).where(eq(sessions.id, london));
    await env.deps.db.update(sessions).set({ ipAddress: '198.51.100.4' }).where(eq(sessions.id, unknown));

    const { gql, trpc } = surfaces(env, a);
    const byId = (rows: { id: string; currentLocation: unknown }[]) =>
      Object.fromEntries(rows.map((s) => [s.id, s.currentLocation]));
    const expected = {
      [sid]: { cityName: 'Berlin', countryISOCode: 'DE' },
      [london]: { cityName: 'London', countryISOCode: 'GB' },
      [unknown]: null,
    };
    const previous = env.deps.geo;
    env.deps.geo = openGeoLocator(CITY_DB);
    try {
      const widget = await a.http.get('/_widgets/UserProfile/sessions');
      expect(widget.status).toBe(200);
      expect(byId(widget.body.data)).toEqual(expected);
      const viaGql = await gql.request<any>('{ sessions { id currentLocation { cityName countryISOCode } } }');
      expect(byId(viaGql.sessions)).toEqual(expected);
      expect(byId(await trpc.client.sessions.list.query())).toEqual(expected);
      // A revoked session comes back located too.
      const revoked = await trpc.client.sessions.revoke.mutate({ sessionId: london });
      expect(revoked).toMatchObject({
        __typename: 'SessionRevoked',
        session: { id: london, currentLocation: { cityName: 'London', countryISOCode: 'GB' } },
      });
    } finally {
      env.deps.geo = previous;
    }

    // Without a database (the default), no session has a location.
    const without = await a.http.get('/_widgets/UserProfile/sessions');
    expect(without.body.data.map((s: { currentLocation: unknown }) => s.currentLocation)).toEqual([null, null]);
    expect(without.body.data).toHaveLength(2); // the London session was revoked above
  });
});
