// The IdP certificate expiry check: a worker pass over every SAML connection that warns once per
// certificate (`connection.saml_certificate_renewal_required`) when it expires within 30 days.
// Its counterpart `connection.saml_certificate_renewed` is recorded by re-configuration
// (config.ts), when a new certificate arrives while an old one is expiring.
import type { SamlCertificate } from '@atrium/db';
import { lockConnection, samlConnectionsWithCertificates, updateIdpCertificates } from '../../connections/store.ts';
import { scopeOf } from '../../environments/service.ts';
import { recordEvent } from '../../events/record.ts';
import type { Deps } from '../../kernel/deps.ts';
import { CERTIFICATE_RENEWAL_WINDOW_DAYS, expiresSoon } from './config.ts';

const PAGE = 200;
const DAY_MS = 86_400_000;

/** The certificates of a list that need a warning at `now`: expiring soon and not yet announced. */
function due(certificates: SamlCertificate[], now: Date): SamlCertificate[] {
  return certificates.filter((c) => !c.renewal_required_at && expiresSoon(c, now));
}

/**
 * One pass at `now`: records `connection.saml_certificate_renewal_required` for each IdP
 * certificate that expires within the renewal window (30 days) and has not been announced, and
 * marks it announced in the same transaction. Returns how many events it recorded.
 */
export async function checkSamlCertificates(deps: Deps, now: Date = deps.now()): Promise<number> {
  let recorded = 0;
  let after = '';
  for (;;) {
    const page = await samlConnectionsWithCertificates(deps.db, after, PAGE);
    for (const candidate of page) {
      if (due(candidate.samlIdpCertificates, now).length === 0) continue;
      const scope = await scopeOf(deps, candidate.environmentId, () => now);
      recorded += await deps.db.transaction(async (tx) => {
        const row = await lockConnection(tx, candidate.environmentId, candidate.id);
        const announce = due(row.samlIdpCertificates, now);
        if (announce.length === 0) return 0;
        const marked = row.samlIdpCertificates.map((c) =>
          announce.includes(c) ? Object.assign({}, c, { renewal_required_at: now.toISOString() }) : c,
        );
        for (const certificate of announce) {
          const left = Date.parse(certificate.not_after) - now.getTime();
          await recordEvent(tx, scope, 'connection.saml_certificate_renewal_required', {
            connection: { id: row.id, organization_id: row.organizationId },
            certificate: {
              certificate_type: 'ResponseSigning',
              expiry_date: certificate.not_after,
              is_expired: left <= 0,
            },
            days_until_expiry: Math.max(0, Math.floor(left / DAY_MS)),
          });
        }
        await updateIdpCertificates(tx, row.id, marked);
        return announce.length;
      });
    }
    if (page.length < PAGE) break;
    after = (page[page.length - 1] as (typeof page)[number]).id;
  }
  if (recorded > 0) deps.log.info({ recorded }, 'SAML certificates expiring soon announced');
  return recorded;
}

export { CERTIFICATE_RENEWAL_WINDOW_DAYS };
