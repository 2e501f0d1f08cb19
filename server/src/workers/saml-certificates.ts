import { checkSamlCertificates, type Deps } from '@atrium/routers';
import { TickLoop } from './loop.ts';
import type { Worker } from './worker.ts';

/**
 * The SAML IdP certificate expiry check every `intervalMs` (default hourly): warns once per
 * certificate expiring within 30 days (`connection.saml_certificate_renewal_required`).
 */
export function samlCertificatesWorker(deps: Deps, intervalMs = 60 * 60 * 1000): Worker {
  const loop = new TickLoop(
    async () => {
      await checkSamlCertificates(deps);
      return false;
    },
    intervalMs,
    (error) => deps.log.warn({ err: error }, 'SAML certificate check failed'),
  );
  loop.start(60_000);
  return { name: 'saml-certificates', stop: () => loop.stop() };
}
