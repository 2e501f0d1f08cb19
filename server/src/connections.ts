import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '@atrium/rest-facade';

/** The HTTP server's bounds on its clients (config.ts `http`). */
export interface HttpBounds {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnectionsPerAddress: number;
}

/**
 * The node:http server options for `bounds`, each set on purpose (Node's defaults suit no
 * server facing the Internet):
 * - `headersTimeout`: the request line and headers must arrive within it (Node: 60 s), so a
 *   client trickling headers (slowloris) holds its socket for seconds, not a minute.
 * - `requestTimeout`: the whole request, headers and body (Node: 300 s). The pipeline cuts an API
 *   body first, at `bodyTimeoutMs`, with the contract's 408; this is the backstop for every other
 *   path (the portal's forms), after the headers' and the body's time and 5 s of slack.
 * - `keepAliveTimeout`: an idle connection is kept this long for its next request (Node: 5 s).
 *   65 s outlives the 60 s idle timeout of the usual load balancers (AWS ALB, nginx's 60 s
 *   upstream keep-alive), so the balancer closes an idle connection first and never sends a
 *   request on one the server is closing (a 502 at the balancer).
 * - `connectionsCheckingInterval`: how often those two timeouts are checked (Node: 30 s, which
 *   would let a 10 s timeout run to 40 s).
 */
export function serverOptions(bounds: HttpBounds) {
  return {
    headersTimeout: bounds.headersTimeoutMs,
    requestTimeout: bounds.headersTimeoutMs + bounds.bodyTimeoutMs + 5_000,
    keepAliveTimeout: bounds.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1_000,
  };
}

/**
 * A socket without traffic either way for this long while a request runs is cut (Node: never):
 * a client that stopped reading its response would otherwise hold the request's turn for good.
 * Procedures answer within `requestTimeoutMs` (about 17 s), so this only cuts stuck clients.
 * Between requests the keep-alive timeout applies instead.
 */
export const SOCKET_IDLE_TIMEOUT_MS = 120_000;

/**
 * Caps the connections open at once from one client address (an IPv6 client by its /64, as the
 * rate limits count it): the connection past `max` is destroyed as it arrives, before anything
 * of it is read, so one client cannot hold every socket of the process. Addresses that `exempt`
 * accepts are not counted: behind a reverse proxy every connection comes from the proxy, so a
 * deployment exempts its trusted proxies (ATRIUM_TRUSTED_PROXIES) and leaves the per-client
 * limit to them. Each process of ATRIUM_PROCESSES counts its own connections. `max` 0 turns the
 * cap off. Returns the count of one address (tests).
 */
export function capConnectionsPerAddress(
  server: Server,
  max: number,
  exempt: (address: string) => boolean = () => false,
  onRefused: () => void = () => {},
): (address: string) => number {
  const open = new Map<string, number>();
  if (max > 0) {
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '') ?? '';
      if (exempt(address)) return;
      const key = addressKey(address);
      const count = (open.get(key) ?? 0) + 1;
      if (count > max) {
        onRefused();
        socket.destroy();
        return;
      }
      open.set(key, count);
      socket.once('close', () => {
        const left = (open.get(key) ?? 1) - 1;
        if (left === 0) open.delete(key);
        else open.set(key, left);
      });
    });
  }
  return (address) => open.get(addressKey(address)) ?? 0;
}
