import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initTRPC } from '@trpc/server';
import { incomingMessageToRequest } from '@trpc/server/adapters/node-http';
import { abortSignalsAnyPonyfill } from '@trpc/server/unstable-core-do-not-import';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server?.listening) await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server on a free loopback port for one test (closed after it). */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/**
 * What patches/@trpc+server+11.25.2.patch must keep: its object-spread helper copies a context
 * through middlewares as the generic one did (getters read, enumerable symbols, an own
 * `__proto__` key kept as data, the prototype untouched).
 */
describe('the patched tRPC object spread', () => {
  it('passes every kind of context property through a middleware unchanged', async () => {
    const symbol = Symbol('s');
    const ctx: Record<PropertyKey, unknown> = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    ctx[symbol] = 2;
    Object.defineProperty(ctx, 'g', { get: () => 3, enumerable: true });
    Object.defineProperty(ctx, 'hidden', { value: 4, enumerable: false });
    const t = initTRPC.context<Record<PropertyKey, unknown>>().create();
    const router = t.router({
      read: t.procedure
        .use(({ next }) => next({ ctx: { extra: 5 } }))
        .query(({ ctx }) => {
          const seen = ctx as Record<PropertyKey, unknown>;
          return {
            a: seen.a,
            symbol: seen[symbol],
            g: seen.g,
            hidden: seen.hidden,
            extra: seen.extra,
            ownProto: Object.hasOwn(seen, '__proto__'),
            prototypeKept: Object.getPrototypeOf(seen) === Object.prototype,
            polluted: ({} as Record<string, unknown>).polluted,
          };
        }),
    });
    expect(await router.createCaller(ctx).read()).toEqual({
      a: 1,
      symbol: 2,
      g: 3,
      hidden: undefined,
      extra: 5,
      ownProto: true,
      prototypeKept: true,
      polluted: undefined,
    });
  });

  it('merges chained inputs and passes the output on as the source spreads them (callRecursive, input and output middlewares)', async () => {
    const t = initTRPC.context<Record<string, unknown>>().create();
    const seen: unknown[] = [];
    const router = t.router({
      both: t.procedure
        .input(z.object({ a: z.number() }).passthrough())
        .input(z.object({ b: z.number() }))
        .use(({ input, next }) => {
          seen.push(input);
          return next({ ctx: { extra: 1 } });
        })
        .output(z.object({ sum: z.number(), extra: z.number() }))
        .query(({ input, ctx }) => ({ sum: input.a + input.b, extra: ctx.extra as number, dropped: true })),
    });
    const input = JSON.parse('{"a": 1, "b": 2, "__proto__": {"polluted": true}}');
    expect(await router.createCaller({}).both(input)).toEqual({ sum: 3, extra: 1 });
    const merged = seen[0] as Record<string, unknown>;
    expect(merged).toMatchObject({ a: 1, b: 2 });
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

/**
 * What the `/trpc` signal hunks of patches/@trpc+server+11.25.2.patch must keep of tRPC's
 * adapter: the Fetch `Request` of a call carries a signal that aborts when the client leaves (and
 * not when the response ends), now the adapter's own as a property rather than one undici ties to
 * it; and combined signals abort when any of theirs does, without `AbortSignal.any`.
 */
describe('the patched tRPC adapter', () => {
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
    // The adapter's own signal, an own property: undici was not handed it.
    expect(Object.getOwnPropertyDescriptor(seen, 'signal')?.value).toBe(seen?.signal);
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
    const any = vi.spyOn(AbortSignal, 'any');
    try {
      const a = new AbortController();
      const b = new AbortController();
      const combined = abortSignalsAnyPonyfill([a.signal, b.signal]);
      expect(combined.aborted).toBe(false);
      b.abort();
      expect(combined.aborted).toBe(true);
      expect(abortSignalsAnyPonyfill([new AbortController().signal, AbortSignal.abort()]).aborted).toBe(true);
      expect(any).not.toHaveBeenCalled();
    } finally {
      any.mockRestore();
    }
  });
});
