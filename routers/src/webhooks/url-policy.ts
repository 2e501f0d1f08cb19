import { type LookupAddress, lookup as lookupCallback } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * IPv6 forms that carry an IPv4 address in their last 32 bits: judged by that address.
 * (IPv4-compatible `::a.b.c.d`, deprecated and unroutable, is refused: it is outside 2000::/3.)
 */
const EMBEDS_IPV4_LOW = [
  ipaddr.parseCIDR('::ffff:0:0/96'), // IPv4-mapped
  ipaddr.parseCIDR('::ffff:0:0:0/96'), // IPv4-translated (RFC 6145)
  ipaddr.parseCIDR('64:ff9b::/96'), // NAT64 well-known prefix
];
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16');
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** Special-purpose blocks inside 2000::/3: Teredo, benchmarking, ORCHID… (2001::/23), documentation. */
const NOT_GLOBAL_V6 = [ipaddr.parseCIDR('2001::/23'), ipaddr.parseCIDR('2001:db8::/32'), ipaddr.parseCIDR('3fff::/20')];

function isPublicV4(address: ipaddr.IPv4): boolean {
  // ipaddr.js names every special-purpose IPv4 block (private, loopback, link-local, CGNAT,
  // multicast, reserved = benchmarking + documentation + 240/4, broadcast, 0/8…); only the rest is unicast.
  return address.range() === 'unicast';
}

function ipv4At(parts: number[], index: number): ipaddr.IPv4 {
  const high = parts[index] as number;
  const low = parts[index + 1] as number;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * Where webhooks may be sent: global unicast addresses only. IPv4 outside every special-purpose
 * block; IPv6 inside 2000::/3 and outside its special-purpose blocks, where forms that embed an
 * IPv4 address (mapped, translated, NAT64, 6to4) are judged by that address and Teredo is
 * refused. Checked when an endpoint is saved and again at every delivery, against the addresses
 * actually connected to (`WEBHOOKS_ALLOW_PRIVATE=true` turns the check off).
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return isPublicV4(ipaddr.IPv4.parse(address));
  if (family !== 6) return false;
  // The WHATWG serialisation first: ipaddr.js reads `::a.b.c.d` as IPv4-mapped, not compatible.
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return false; // e.g. a zone id (fe80::1%eth0)
  }
  const v6 = ipaddr.IPv6.parse(canonical);
  if (EMBEDS_IPV4_LOW.some((range) => v6.match(range))) return isPublicV4(ipv4At(v6.parts, 6));
  if (v6.match(SIX_TO_FOUR)) return isPublicV4(ipv4At(v6.parts, 1));
  return v6.match(GLOBAL_UNICAST) && !NOT_GLOBAL_V6.some((range) => v6.match(range));
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

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses private addresses at connect time (no DNS rebinding):
 * the address connected to is one this check saw. Its error has `code: 'EPRIVATE'`.
 */
export function publicOnlyLookup(hostname: string, options: object, callback: LookupCallback): void {
  lookupCallback(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    if (list.length === 0 || list.some((a) => !isPublicAddress(a.address))) {
      const refused = Object.assign(new Error(`${hostname} resolves to a private address`), { code: 'EPRIVATE' });
      return callback(refused, []);
    }
    if ((options as { all?: boolean }).all) return callback(null, list);
    const first = list[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
}
