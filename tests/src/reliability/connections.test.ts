import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { capConnectionsPerAddress, serverOptions } from '@atrium/server';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** A connection from `localAddress` (any 127.x.y.z is this host): open, or closed by the server at once. */
async function dial(port: number, localAddress: string): Promise<{ socket: Socket; refused: Promise<boolean> }> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => {});
  await once(socket, 'connect');
  // A refused connection is closed without a byte; an accepted one answers a request.
  const refused = new Promise<boolean>((resolve) => {
    socket.once('close', () => resolve(true));
    socket.once('data', () => resolve(false));
  });
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  return { socket, refused };
}

describe('connections per client address (ATRIUM_MAX_CONNECTIONS_PER_ADDRESS)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    const open = server;
    server = undefined;
    if (!open) return;
    open.closeAllConnections();
    await new Promise((resolve) => open.close(resolve));
  });

  async function start(max: number, exempt?: (address: string) => boolean) {
    server = createServer((_req, res) => res.end('ok'));
    let refusals = 0;
    const count = capConnectionsPerAddress(server, max, exempt, () => refusals++);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, count, refusals: () => refusals };
  }

  it('closes the connection past the cap from one address, serves other addresses, and counts closes', async () => {
    const { port, count, refusals } = await start(2);
    const [a, b] = [await dial(port, '127.0.0.2'), await dial(port, '127.0.0.2')];
    expect([await a.refused, await b.refused]).toEqual([false, false]);
    const third = await dial(port, '127.0.0.2');
    expect(await third.refused).toBe(true);
    expect(refusals()).toBe(1);
    expect(count('127.0.0.2')).toBe(2);
    // Another client is not affected.
    const other = await dial(port, '127.0.0.3');
    expect(await other.refused).toBe(false);
    // A connection closed frees its place.
    a.socket.destroy();
    await vi.waitFor(() => expect(count('127.0.0.2')).toBe(1));
    const again = await dial(port, '127.0.0.2');
    expect(await again.refused).toBe(false);
    for (const c of [b, other, again]) c.socket.destroy();
    await vi.waitFor(() => expect([count('127.0.0.2'), count('127.0.0.3')]).toEqual([0, 0]));
  });

  it('does not count an exempt address (a trusted proxy), and is off at 0', async () => {
    const { port } = await start(1, (address) => address === '127.0.0.4');
    const proxied = await Promise.all([1, 2, 3].map(() => dial(port, '127.0.0.4')));
    expect(await Promise.all(proxied.map((c) => c.refused))).toEqual([false, false, false]);
    for (const c of proxied) c.socket.destroy();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    const off = await start(0);
    const many = await Promise.all([1, 2, 3].map(() => dial(off.port, '127.0.0.5')));
    expect(await Promise.all(many.map((c) => c.refused))).toEqual([false, false, false]);
    for (const c of many) c.socket.destroy();
  });

  it('sets the header, request and keep-alive timeouts on purpose', () => {
    const options = serverOptions({
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      maxConnectionsPerAddress: 256,
    });
    // The pipeline's JSON 408 for a slow API body comes before node's own request timeout.
    expect(options).toEqual({
      headersTimeout: 10_000,
      requestTimeout: 25_000,
      keepAliveTimeout: 65_000,
      connectionsCheckingInterval: 1_000,
    });
  });
});
