import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may be sent: http(s) URLs whose host resolves only to public unicast
 * addresses. Private, loopback, link-local (and every other special-purpose range) are
 * refused unless the operator allows them (`WEBHOOKS_ALLOW_PRIVATE=true`). Checked when an
 * endpoint is saved and again at every delivery, against the addresses actually connected to.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; message: string };

/** Syntax only: an absolute http(s) URL without credentials. */
export function parseWebhookUrl(raw: string): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'endpoint_url must be an absolute http(s) URL.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: 'endpoint_url must use http or https.' };
  }
  if (url.username || url.password) return { ok: false, message: 'endpoint_url must not carry credentials.' };
  return { ok: true, url };
}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Full check: syntax, then every address the host resolves to. A host that does not resolve
 * now is accepted (it is checked again at delivery time).
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<UrlCheck> {
  const parsed = parseWebhookUrl(raw);
  if (!parsed.ok || allowPrivate) return parsed;
  const host = hostOf(parsed.url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return parsed;
    }
  }
  if (addresses.some((address) => !isPublicAddress(address))) {
    return { ok: false, message: 'endpoint_url points to a private, loopback or link-local address.' };
  }
  return parsed;
}
