// The loopback SAML IdP of the tests (samlify: server/src/dev-idp.ts) and what a SAML test needs
// around it: a configured connection of a fresh environment, a scope at a fixed clock, and
// responses built and signed on demand (signed by samlify, tampered with by the attack tests).
import { connections } from '@atrium/db';
import {
  configureSamlConnection,
  type SamlConfigInput,
  type Scope,
  samlAcsUrl,
  samlSpEntityId,
  scopeOf,
} from '@atrium/routers';
import {
  type DevIdp,
  makeSamlIdpKey,
  type SamlIdpKey,
  type SamlResponseFields,
  samlId,
  samlResponseXml,
  signAssertion,
  signResponse,
  startDevIdp,
} from '@atrium/server';
import { eq } from 'drizzle-orm';
import { adminCaller, makeOrganization } from './tokens.ts';
import { newEnvironment, type TestEnvironment } from './world.ts';

export { makeSamlIdpKey, type SamlIdpKey, samlId, samlResponseXml, signAssertion, signResponse, startDevIdp };

/** The fixed instant SAML tests run at (never the wall clock). */
export const SAML_TEST_NOW = new Date('2026-06-01T12:00:00.000Z');

/** A clock the test moves by hand. */
export interface TestClock {
  at: Date;
  now: () => Date;
  advance(ms: number): void;
}

export function testClock(at = SAML_TEST_NOW): TestClock {
  const clock: TestClock = {
    at,
    now: () => clock.at,
    advance(ms: number) {
      clock.at = new Date(clock.at.getTime() + ms);
    },
  };
  return clock;
}

/** One loopback IdP (key made at start, valid around the fixed clock) for a test file. */
export async function startTestIdp(clock: TestClock): Promise<DevIdp> {
  const key = await makeSamlIdpKey(
    'Atrium test IdP',
    new Date(clock.at.getTime() - 86_400_000),
    new Date(clock.at.getTime() + 365 * 86_400_000),
  );
  return startDevIdp({ now: clock.now, key });
}

export type Signing = 'assertion' | 'response' | 'both' | 'none';

/** Signs a response XML as asked (assertion first, then the response around it, as IdPs do). */
export function sign(xml: string, signing: Signing, key: SamlIdpKey): string {
  let signed = xml;
  if (signing === 'assertion' || signing === 'both') signed = signAssertion(signed, key);
  if (signing === 'response' || signing === 'both') signed = signResponse(signed, key);
  return signed;
}

export const b64 = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');

/** A SAML connection of a fresh environment, configured from the IdP's metadata. */
export interface SamlSetup {
  env: TestEnvironment;
  clock: TestClock;
  scope: Scope;
  connectionId: string;
  organizationId: string;
  sp: { entityId: string; acsUrl: string };
  idp: DevIdp;
  row(): Promise<typeof connections.$inferSelect>;
  /** The fields of a valid response to `inResponseTo` (or IdP-initiated), at the clock's time. */
  fields(inResponseTo: string | undefined, overrides?: Partial<SamlResponseFields>): SamlResponseFields;
}

export async function samlSetup(
  idp: DevIdp,
  clock: TestClock,
  config: SamlConfigInput = {},
  connectionType = 'GenericSAML',
): Promise<SamlSetup> {
  const env = await newEnvironment();
  const admin = await adminCaller();
  const organizationId = await makeOrganization(env, 'Acme SAML');
  const created = await admin.connections.create({
    environment: env.environmentId,
    organization_id: organizationId,
    connection_type: connectionType as 'GenericSAML',
    name: 'Acme SAML',
  });
  const scope = await scopeOf(env.deps, env.environmentId, clock.now);
  const configInput: SamlConfigInput = { idp_metadata_xml: idp.metadataXml };
  Object.assign(configInput, config);
  await configureSamlConnection(scope, created.id, configInput);
  const sp = { entityId: samlSpEntityId(env.deps, created.id), acsUrl: samlAcsUrl(env.deps, created.id) };
  return {
    env,
    clock,
    scope,
    connectionId: created.id,
    organizationId,
    sp,
    idp,
    async row() {
      const [row] = await env.deps.db.select().from(connections).where(eq(connections.id, created.id));
      if (!row) throw new Error(`no connection ${created.id}`);
      return row;
    },
    fields(inResponseTo, overrides = {}) {
      const at = clock.now();
      const base: SamlResponseFields = {
        issuer: idp.entityId,
        destination: sp.acsUrl,
        inResponseTo,
        nameId: 'ada@example.com',
        recipient: sp.acsUrl,
        audience: sp.entityId,
        issueInstant: at,
        notBefore: at,
        notOnOrAfter: new Date(at.getTime() + 5 * 60_000),
        attributes: {
          email: 'ada@example.com',
          firstName: 'Ada',
          lastName: 'Lovelace',
          groups: ['Engineering', 'Admins'],
        },
      };
      return Object.assign(base, overrides);
    },
  };
}
