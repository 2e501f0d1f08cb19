import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Is this (normalised) address one of the trusted proxies (`ATRIUM_TRUSTED_PROXIES`)? */
export type ProxyPredicate = (address: string) => boolean;

/** Hops of `X-Forwarded-For` read at most, right to left (a chain of proxies is short). */
const MAX_HOPS = 32;

/**
 * An address as the limits and logs name it: IPv4-mapped IPv6 as plain IPv4, IPv6 compressed,
 * no zone; a `[v6]:port` or `v4:port` (some proxies add the port) loses the port. Undefined
 * when it is not an IP address.
 */
export function normalizeAddress(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let text = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed?.[1]) text = bracketed[1];
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  text = text.split('%')[0] ?? text;
  if (!ipaddr.isValid(text)) return undefined;
  return ipaddr.process(text).toString();
}

/**
 * The trusted proxies of `ATRIUM_TRUSTED_PROXIES` (addresses or CIDR ranges, IPv4 or IPv6) as
 * ranges; an entry that is neither throws, naming it.
 */
export function parseTrustedProxies(entries: readonly string[]): Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> {
  return entries.map((entry) => {
    const text = entry.trim();
    try {
      if (text.includes('/')) return ipaddr.parseCIDR(text);
      const address = ipaddr.process(text);
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    } catch {
      throw new Error(`ATRIUM_TRUSTED_PROXIES takes IP addresses and CIDR ranges (10.0.0.0/8, ::1), got '${entry}'.`);
    }
  });
}

/**
 * The predicate of a list of trusted proxies (empty: nothing is trusted, `X-Forwarded-For` is
 * ignored). Exported for every step that must tell a proxy from a client (the limits, and a
 * per-address connection cap that must not count a proxy as one client).
 */
export function trustedProxies(entries: readonly string[]): ProxyPredicate {
  const ranges = parseTrustedProxies(entries);
  if (ranges.length === 0) return () => false;
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  };
}

/** The normalised peer address of each socket, worked out once per connection (keep-alive reuses it). */
const peers = new WeakMap<Socket, string | undefined>();

function peerOf(socket: Socket): string | undefined {
  if (peers.has(socket)) return peers.get(socket);
  const peer = normalizeAddress(socket.remoteAddress);
  // A socket not yet (or no longer) connected has no address: ask again next time.
  if (socket.remoteAddress !== undefined) peers.set(socket, peer);
  return peer;
}

/**
 * The client's address, the one that every limit and log uses: the socket's peer, unless the
 * peer is a trusted proxy; then `X-Forwarded-For` is read from the right (each proxy appends the
 * address it got the request from) and the first address that is not a trusted proxy is the
 * client. Hops to the left of it were written by the client and are never believed. A hop that
 * is not an address stops the walk at the last one vouched for.
 */
export function clientAddressOf(req: IncomingMessage, isTrusted: ProxyPredicate): string | undefined {
  const peer = peerOf(req.socket);
  if (peer === undefined || !isTrusted(peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  if (typeof header !== 'string' || header === '') return peer;
  const hops = header.split(',');
  let client = peer;
  for (let i = hops.length - 1; i >= 0 && i >= hops.length - MAX_HOPS; i--) {
    const hop = normalizeAddress(hops[i]);
    if (hop === undefined) break;
    client = hop;
    if (!isTrusted(hop)) break;
  }
  return client;
}
