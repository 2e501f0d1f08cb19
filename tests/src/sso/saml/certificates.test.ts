import { events } from '@atrium/db';
import { checkSamlCertificates, configureSamlConnection } from '@atrium/routers';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSamlIdpKey, type SamlSetup, samlSetup, startTestIdp, testClock } from '../../helpers/saml-idp.ts';

const DAY = 86_400_000;
const clock = testClock();
let idp: Awaited<ReturnType<typeof startTestIdp>>;

beforeAll(async () => {
  idp = await startTestIdp(clock);
  await samlSetup(idp, clock);
});
afterAll(async () => {
  await idp.close();
});

/** A connection whose only IdP certificate expires `days` after the test clock. */
async function connectionExpiringIn(days: number): Promise<SamlSetup> {
  const key = await makeSamlIdpKey(
    'Expiring',
    new Date(clock.at.getTime() - 300 * DAY),
    new Date(clock.at.getTime() + days * DAY),
  );
  const setup = await samlSetup(idp, clock, { idp_entity_id: idp.entityId });
  // Replace the metadata's certificate by the expiring one only.
  await configureSamlConnection(setup.scope, setup.connectionId, {
    idp_sso_url: idp.ssoUrl,
    idp_certificates: [key.certificatePem],
  });
  return setup;
}

async function certificateEvents(setup: SamlSetup) {
  return setup.env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, setup.env.environmentId), like(events.event, 'connection.saml_certificate_%')))
    .orderBy(events.id);
}

describe('the IdP certificate expiry check', () => {
  it('warns once per certificate expiring within 30 days, at a fixed clock', async () => {
    const soon = await connectionExpiringIn(20);
    const later = await connectionExpiringIn(100);
    expect((await soon.row()).samlIdpCertificates.map((c) => c.not_after)).toEqual([
      new Date(clock.at.getTime() + 20 * DAY).toISOString(),
    ]);

    await checkSamlCertificates(soon.env.deps, clock.at);
    const first = await certificateEvents(soon);
    expect(first.map((e) => e.event)).toEqual(['connection.saml_certificate_renewal_required']);
    expect(first[0]?.data).toEqual({
      connection: { id: soon.connectionId, organization_id: soon.organizationId },
      certificate: {
        certificate_type: 'ResponseSigning',
        expiry_date: new Date(clock.at.getTime() + 20 * DAY).toISOString(),
        is_expired: false,
      },
      days_until_expiry: 20,
    });
    expect(first[0]?.createdAt.getTime()).toBe(clock.at.getTime());
    expect(await certificateEvents(later)).toEqual([]);

    // Once per certificate: a second pass, even days later, records nothing new.
    await checkSamlCertificates(soon.env.deps, new Date(clock.at.getTime() + 5 * DAY));
    expect(await certificateEvents(soon)).toHaveLength(1);
    // The other one enters the window 70 days later.
    await checkSamlCertificates(soon.env.deps, new Date(clock.at.getTime() + 71 * DAY));
    expect((await certificateEvents(later)).map((e) => e.event)).toEqual([
      'connection.saml_certificate_renewal_required',
    ]);
  });

  it('records connection.saml_certificate_renewed when a new certificate arrives while one is expiring', async () => {
    const setup = await connectionExpiringIn(10);
    await checkSamlCertificates(setup.env.deps, clock.at);
    const next = await makeSamlIdpKey(
      'Next',
      new Date(clock.at.getTime() - DAY),
      new Date(clock.at.getTime() + 400 * DAY),
    );
    const current = (await setup.row()).samlIdpCertificates.map((c) => c.pem);
    await configureSamlConnection(setup.scope, setup.connectionId, {
      idp_certificates: [...current, next.certificatePem],
    });
    const list = await certificateEvents(setup);
    expect(list.map((e) => e.event)).toEqual([
      'connection.saml_certificate_renewal_required',
      'connection.saml_certificate_renewed',
    ]);
    expect(list[1]?.data).toEqual({
      connection: { id: setup.connectionId, organization_id: setup.organizationId },
      certificate: {
        certificate_type: 'ResponseSigning',
        expiry_date: new Date(clock.at.getTime() + 400 * DAY).toISOString(),
      },
      renewed_at: clock.at.toISOString(),
    });
    // The expiring certificate kept its mark: no second warning after the re-configuration.
    await checkSamlCertificates(setup.env.deps, clock.at);
    expect(await certificateEvents(setup)).toHaveLength(2);
  });

  it('records no renewal when no certificate was expiring', async () => {
    const setup = await connectionExpiringIn(200);
    const next = await makeSamlIdpKey(
      'Next',
      new Date(clock.at.getTime() - DAY),
      new Date(clock.at.getTime() + 400 * DAY),
    );
    await configureSamlConnection(setup.scope, setup.connectionId, { idp_certificates: [next.certificatePem] });
    expect(await certificateEvents(setup)).toEqual([]);
  });
});
