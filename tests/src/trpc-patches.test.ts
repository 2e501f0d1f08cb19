import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { incomingMessageToRequest } from '@trpc/server/adapters/node-http';
import { abortSignalsAnyPonyfill } from '@trpc/server/unstable-core-do-not-import';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * What patches/@trpc+server+11.25.2.patch must keep of tRPC's behaviour: the Fetch `Request` of
 * a `/trpc` call carries a signal that aborts when the client leaves (and not when the response
 * ends), and combined signals abort when any of theirs does.
 */
describe('the patched tRPC adapter', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server?.listening) await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
    server = createServer(handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  it('gives the request its own signal, aborted when the client leaves before the answer', async () => {
    let seen: Request | undefined;
    const aborted = new Promise<boolean>((resolve) => {
      void listen((req, res) => {
        seen = incomingMessageToRequest(req, res, { maxBodySize: null });
        seen.signal.addEventListener('abort', () => resolve(true));
        // No answer: the client gives up first.
      }).then((port) => {
        const client = httpRequest({ port, path: '/trpc/x?input=1', headers: { 'x-probe': 'yes' } });
        client.on('error', () => {});
        client.end();
        setImmediate(function waitForServer() {
          if (seen) client.destroy();
          else setImmediate(waitForServer);
        });
      });
    });
    expect(await aborted).toBe(true);
    expect(seen?.signal.aborted).toBe(true);
    expect(seen?.method).toBe('GET');
    expect(seen?.headers.get('x-probe')).toBe('yes');
    expect(new URL(seen?.url ?? '').pathname).toBe('/trpc/x');
  });

  it('leaves the signal alone when the response ends normally, and reads a POST body', async () => {
    let seen: Request | undefined;
    let body = '';
    const port = await listen(async (req, res) => {
      seen = incomingMessageToRequest(req, res, { maxBodySize: null });
      body = await seen.text();
      res.end('ok');
    });
    const answer = await fetch(`http://127.0.0.1:${port}/trpc/y`, { method: 'POST', body: '{"a":1}' });
    expect(await answer.text()).toBe('ok');
    expect(body).toBe('{"a":1}');
    expect(seen?.signal.aborted).toBe(false);
  });

  it('combines signals: the result aborts when any source does, or at once if one already has', () => {
    const a = new AbortController();
    const b = new AbortController();
    const combined = abortSignalsAnyPonyfill([a.signal, b.signal]);
    expect(combined.aborted).toBe(false);
    b.abort();
    expect(combined.aborted).toBe(true);
    expect(abortSignalsAnyPonyfill([new AbortController().signal, AbortSignal.abort()]).aborted).toBe(true);
  });
});
