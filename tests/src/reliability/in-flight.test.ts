import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { InFlightLimit, type InFlightOptions, weightOfPage } from '@atrium/rest-facade';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** What the limit uses of a response: its `close` event and `closed` flag. */
const response = () => Object.assign(new EventEmitter(), { closed: false }) as unknown as ServerResponse;
const close = (res: ServerResponse) => {
  (res as { closed: boolean }).closed = true;
  (res as unknown as EventEmitter).emit('close');
};

function limit(options: Partial<InFlightOptions> = {}) {
  const shed: string[] = [];
  const inFlight = new InFlightLimit({ max: 2, queue: 2, timeoutMs: 1_000, ...options }, (reason) => shed.push(reason));
  return { inFlight, shed };
}

describe('InFlightLimit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('admits up to max at once without a promise, then queues in arrival order', async () => {
    const { inFlight } = limit();
    const [a, b, c, d] = [response(), response(), response(), response()];
    expect(inFlight.enter(a)).toEqual({ ok: true });
    expect(inFlight.enter(b)).toEqual({ ok: true });
    const order: string[] = [];
    const third = (inFlight.enter(c) as Promise<unknown>).then((turn) => order.push(`c ${JSON.stringify(turn)}`));
    const fourth = (inFlight.enter(d) as Promise<unknown>).then((turn) => order.push(`d ${JSON.stringify(turn)}`));
    expect(inFlight.load).toEqual({ running: 2, waiting: 2 });

    close(b);
    await third;
    expect(order).toEqual(['c {"ok":true}']);
    // The turn was handed over, not given back: still two running.
    expect(inFlight.load).toEqual({ running: 2, waiting: 1 });
    close(a);
    await fourth;
    expect(order).toEqual(['c {"ok":true}', 'd {"ok":true}']);
    close(c);
    close(d);
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses at once when the queue is full, with a 503 the contract renders', () => {
    const { inFlight, shed } = limit({ max: 1, queue: 1 });
    inFlight.enter(response());
    void inFlight.enter(response());
    const refused = inFlight.enter(response());
    expect(refused).toMatchObject({
      ok: false,
      reason: 'queue_full',
      retryAfter: 1,
      error: { status: 503, apiCode: 'service_unavailable' },
    });
    expect(shed).toEqual(['queue_full']);
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
  });

  it('drops a waiter whose caller left, without giving it a turn', async () => {
    const { inFlight, shed } = limit({ max: 1 });
    const [running, gone, next] = [response(), response(), response()];
    inFlight.enter(running);
    const left = inFlight.enter(gone) as Promise<{ ok: boolean; reason?: string }>;
    const waits = inFlight.enter(next) as Promise<{ ok: boolean }>;
    close(gone);
    expect(await left).toMatchObject({ ok: false, reason: 'closed' });
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    close(running);
    expect(await waits).toEqual({ ok: true });
    expect(inFlight.load).toEqual({ running: 1, waiting: 0 });
    // A caller leaving is not a refusal of the server's.
    expect(shed).toEqual([]);
  });

  it('gives no turn to a request whose caller left before it asked for one', () => {
    const { inFlight, shed } = limit({ max: 1 });
    const gone = response();
    close(gone);
    expect(inFlight.enter(gone)).toMatchObject({ ok: false, reason: 'closed' });
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
    expect(inFlight.enter(response())).toEqual({ ok: true });
    expect(shed).toEqual([]);
  });

  it('refuses waiters past the timeout, and gives the next turn to one still within it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { inFlight, shed } = limit({ max: 1, timeoutMs: 1_000 });
    const running = response();
    inFlight.enter(running);
    const early = inFlight.enter(response()) as Promise<{ ok: boolean; reason?: string }>;
    vi.advanceTimersByTime(600);
    const late = inFlight.enter(response()) as Promise<{ ok: boolean; reason?: string }>;
    vi.advanceTimersByTime(400);
    expect(await early).toMatchObject({ ok: false, reason: 'timeout', error: { status: 503 } });
    expect(shed).toEqual(['timeout']);
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    close(running);
    expect(await late).toEqual({ ok: true });
    vi.advanceTimersByTime(1_000);
    expect(shed).toEqual(['timeout']);
    expect(inFlight.load).toEqual({ running: 1, waiting: 0 });
  });

  it('refuses a waiter reached after its deadline even before its timer fires', async () => {
    // Only the clock is fake: the (unref'd) timer stays pending while the deadline passes.
    vi.useFakeTimers({ toFake: ['performance'] });
    const { inFlight, shed } = limit({ max: 1, timeoutMs: 1_000 });
    const running = response();
    inFlight.enter(running);
    const stale = inFlight.enter(response()) as Promise<{ ok: boolean; reason?: string }>;
    vi.advanceTimersByTime(1_001);
    close(running);
    expect(await stale).toMatchObject({ ok: false, reason: 'timeout' });
    expect(shed).toEqual(['timeout']);
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('weighs a page of more than 25 items as ⌈limit / 25⌉ requests', () => {
    expect([undefined, 1, 10, '25', 26, '50', 100, 1_000, 'x', -5].map(weightOfPage)).toEqual([
      1, 1, 1, 1, 2, 2, 4, 4, 1, 1,
    ]);
  });

  it('runs pages by weight, first come first served: a waiting page is not overtaken', async () => {
    const { inFlight } = limit({ max: 8, queue: 10 });
    const small = Array.from({ length: 6 }, response);
    for (const res of small) expect(inFlight.enter(res)).toEqual({ ok: true });
    const order: string[] = [];
    const page = response();
    const pageTurn = (inFlight.enter(page, 4) as Promise<unknown>).then(() => order.push('page'));
    // Two turns are free, but the page came first and needs four.
    const later = (inFlight.enter(response()) as Promise<unknown>).then(() => order.push('small'));
    expect(inFlight.load).toEqual({ running: 6, waiting: 2 });
    close(small[0] as ServerResponse);
    // Three turns free: still not enough for the page, and the small request stays behind it.
    expect(inFlight.load).toEqual({ running: 5, waiting: 2 });
    close(small[1] as ServerResponse);
    await pageTurn;
    expect(inFlight.load).toEqual({ running: 8, waiting: 1 });
    close(small[2] as ServerResponse);
    await later;
    expect(order).toEqual(['page', 'small']);
    expect(inFlight.load).toEqual({ running: 8, waiting: 0 });
    close(page);
    expect(inFlight.load).toEqual({ running: 4, waiting: 0 });
  });

  it('lets a call heavier than the whole limit run alone', async () => {
    const { inFlight } = limit({ max: 2 });
    expect(inFlight.enter(response(), 4)).toEqual({ ok: true });
    expect(inFlight.load).toEqual({ running: 2, waiting: 0 });
  });
});
