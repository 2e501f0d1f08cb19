// Responses in the formats Okta, Entra ID and Google Workspace send, recorded once
// (fixtures/record.ts, signed with the fixture key) and replayed here at their fixed clock.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connections } from '@atrium/db';
import { configureSamlConnection, consumeSamlResponse, type Scope, SsoFailure, scopeOf } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { b64 } from '../../helpers/saml-idp.ts';
import { makeOrganization } from '../../helpers/tokens.ts';
import { newEnvironment, TEST_ISSUER, type TestEnvironment } from '../../helpers/world.ts';
import { FIXTURE, type Vendor } from './fixtures/fixture.ts';

const here = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => readFileSync(join(here, name), 'utf8');
const at = new Date(new Date(FIXTURE.now).getTime() + 10_000);

const ISSUERS: Record<Vendor, string> = {
  okta: 'http://www.okta.com/exk1fixture0okta0id7',
  entra: 'https://sts.windows.net/72f988bf-0000-4000-8000-2d7cd011db47/',
  google: 'https://accounts.google.com/o/saml2?idpid=C0fixture1',
};

let env: TestEnvironment;
let scope: Scope;

beforeAll(async () => {
  expect(TEST_ISSUER).toBe(FIXTURE.issuer);
  env = await newEnvironment();
  const organizationId = await makeOrganization(env, 'Fixture Corp');
  await env.deps.db.insert(connections).values({
    id: FIXTURE.connectionId,
    environmentId: env.environmentId,
    organizationId,
    connectionType: 'GenericSAML',
    name: 'Recorded vendors',
    state: 'inactive',
    createdAt: at,
    updatedAt: at,
  });
  scope = await scopeOf(env.deps, env.environmentId, () => at);
});

async function replay(vendor: Vendor, xml = fixture(`${vendor}.xml`), when = at) {
  await configureSamlConnection(scope, FIXTURE.connectionId, {
    idp_entity_id: ISSUERS[vendor],
    idp_sso_url: 'https://idp.example/sso',
    idp_certificates: [fixture('fixture-idp.crt')],
  });
  const [row] = await env.deps.db.select().from(connections).where(eq(connections.id, FIXTURE.connectionId));
  const at = Object.assign({}, scope, { now: () => when });
  return consumeSamlResponse(
    at,
    row as typeof connections.$inferSelect,
    { SAMLResponse: b64(xml) },
    {
      samlRequestId: FIXTURE.requestIds[vendor],
    },
  );
}

describe('recorded vendor responses, replayed at a fixed clock', () => {
  it('Okta (Response and Assertion signed, plain attribute names)', async () => {
    expect(await replay('okta')).toEqual({
      idpId: 'ada.lovelace@acme.example',
      email: 'ada.lovelace@acme.example',
      firstName: 'Ada',
      lastName: 'Lovelace',
      name: 'Ada Lovelace',
      groups: ['Everyone', 'Engineering'],
      customAttributes: {},
      rawAttributes: {
        email: 'ada.lovelace@acme.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
        groups: ['Everyone', 'Engineering'],
      },
    });
  });

  it('Entra ID (Assertion signed, persistent NameID, claim URIs)', async () => {
    const identity = await replay('entra');
    expect(identity).toMatchObject({
      idpId: '5Xq9fixtureEntraPersistentId0wYz',
      email: 'grace.hopper@contoso.example',
      firstName: 'Grace',
      lastName: 'Hopper',
      name: 'Grace Hopper',
      groups: ['0e5c1b7a-0000-4000-8000-000000000001', '0e5c1b7a-0000-4000-8000-000000000002'],
    });
    expect(identity.rawAttributes['http://schemas.microsoft.com/identity/claims/objectidentifier']).toBe(
      'a1b2c3d4-0000-4000-8000-fixtureentra1',
    );
  });

  it('Google Workspace (Response signed only, basic attribute names)', async () => {
    expect(await replay('google')).toMatchObject({
      idpId: 'katherine@initech.example',
      email: 'katherine@initech.example',
      firstName: 'Katherine',
      lastName: 'Johnson',
      name: 'Katherine Johnson',
    });
  });

  it('refuses a recorded response replayed after its NotOnOrAfter (plus the skew)', async () => {
    const late = new Date(new Date(FIXTURE.now).getTime() + 5 * 60_000 + 60_000);
    const failure = await replay('google', fixture('google.xml').replace('_fixturegoogleassertion', '_x'), late).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(SsoFailure);
    expect((failure as SsoFailure).reason).toBe('invalid_signature');
    const expired = await replay('okta', undefined, late).catch((e: unknown) => e);
    expect((expired as SsoFailure).reason).toBe('expired');
  });
});
