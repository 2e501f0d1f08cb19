import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import { parse } from 'tldts';

const require = createRequire(import.meta.url);
/**
 * The reserved documentation domains (RFC 2606 section 3): no one's mail provider, and what test
 * suites and examples name their customers' domains with, so never refused as consumer domains.
 */
const RESERVED_EXAMPLE_DOMAINS = ['example.com', 'example.net', 'example.org'];

/** A maintained list of consumer (free e-mail) domains, shipped in the package: `email-providers`. */
const CONSUMER_DOMAINS: ReadonlySet<string> = new Set(
  (require('email-providers/all.json') as string[]).filter((domain) => !RESERVED_EXAMPLE_DOMAINS.includes(domain)),
);

export type DomainCheck =
  | { ok: true; domain: string }
  | { ok: false; code: 'invalid_domain' | 'consumer_domain'; message: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The contract's domain rules: trim, lower-case, IDNA to ASCII (punycode), a registrable name
 * under a known ICANN public suffix (never a bare suffix, an IP, `localhost` or a URL), sane
 * labels, and not a consumer mail domain.
 */
export function checkDomain(raw: string): DomainCheck {
  const bad = (message: string): DomainCheck => ({ ok: false, code: 'invalid_domain', message });
  let value = raw.trim().toLowerCase();
  if (value.endsWith('.')) value = value.slice(0, -1);
  if (value === '') return bad('The domain is empty.');
  if (/[\s/:@?#\\*%]/.test(value))
    return bad(`'${raw}' is not a domain name (URLs, ports and wildcards are not accepted).`);
  const ascii = domainToASCII(value);
  if (!ascii) return bad(`'${raw}' is not a valid internationalised domain name.`);
  if (ascii.length > 253) return bad('The domain is longer than 253 characters.');
  const labels = ascii.split('.');
  if (labels.length < 2) return bad(`'${raw}' is not a fully qualified domain name.`);
  for (const label of labels) {
    if (!LABEL.test(label)) return bad(`'${raw}' has an invalid label '${label}'.`);
    if (label.slice(2, 4) === '--' && !label.startsWith('xn--')) {
      return bad(`'${raw}' has a label with hyphens in the third and fourth positions.`);
    }
  }
  const parsed = parse(ascii, { allowPrivateDomains: false });
  if (parsed.isIp) return bad('IP addresses are not domains.');
  if (!parsed.isIcann || !parsed.publicSuffix) return bad(`'${raw}' is not under a known public suffix.`);
  if (!parsed.domain || parsed.hostname === parsed.publicSuffix) {
    return bad(`'${raw}' is a public suffix; add a domain registered under it.`);
  }
  if (CONSUMER_DOMAINS.has(ascii) || CONSUMER_DOMAINS.has(parsed.domain)) {
    return {
      ok: false,
      code: 'consumer_domain',
      message: `'${ascii}' is a common consumer domain and cannot be added.`,
    };
  }
  return { ok: true, domain: ascii };
}

/** Normalises a domain for lookups (filters) without judging it. */
export function normalizeDomainForLookup(raw: string): string {
  let value = raw.trim().toLowerCase();
  if (value.endsWith('.')) value = value.slice(0, -1);
  return domainToASCII(value) || value;
}
