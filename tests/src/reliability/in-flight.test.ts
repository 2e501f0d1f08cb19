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

  it('gives a freed turn to the waiting environment that runs less, first come first served within one', async () => {
    const { inFlight } = limit({ max: 2, queue: 10 });
    const busy = [response(), response()];
    for (const res of busy) expect(inFlight.enter(res, 1, 'env_a')).toEqual({ ok: true });
    const order: string[] = [];
    const wait = (name: string, share: string) => {
      const res = response();
      const turn = (inFlight.enter(res, 1, share) as Promise<unknown>).then(() => order.push(name));
      return { res, turn };
    };
    // env_a queued first (a3, a4), then env_b (b1, b2): arrival order alone would serve a3 and a4 first.
    const a3 = wait('a3', 'env_a');
    const a4 = wait('a4', 'env_a');
    const b1 = wait('b1', 'env_b');
    const b2 = wait('b2', 'env_b');
    expect(inFlight.load).toEqual({ running: 2, waiting: 4 });

    close(busy[0] as ServerResponse);
    await b1.turn;
    // env_b ran nothing, env_a one: env_b goes first.
    expect(order).toEqual(['b1']);
    expect([inFlight.runningOf('env_a'), inFlight.runningOf('env_b')]).toEqual([1, 1]);
    close(busy[1] as ServerResponse);
    await a3.turn;
    // One each running: the earlier arrival (a3) among equals, and env_a's own order kept.
    expect(order).toEqual(['b1', 'a3']);
    // a3 done: env_a runs nothing, env_b one, so a4 goes before b2, although b2 waited longer.
    close(a3.res);
    await a4.turn;
    close(b1.res);
    await b2.turn;
    expect(order).toEqual(['b1', 'a3', 'a4', 'b2']);
    for (const { res } of [a4, b2]) close(res);
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
    // An environment with nothing running or waiting is forgotten.
    expect([inFlight.runningOf('env_a'), inFlight.runningOf('env_b')]).toEqual([0, 0]);
  });

  it('serves a second environment at the next free turn however long the first one’s queue', async () => {
    const { inFlight, shed } = limit({ max: 4, queue: 200 });
    const running = Array.from({ length: 4 }, response);
    for (const res of running) inFlight.enter(res, 1, 'env_busy');
    const queued = Array.from({ length: 150 }, () => inFlight.enter(response(), 1, 'env_busy') as Promise<unknown>);
    const reader = response();
    let served = false;
    const read = (inFlight.enter(reader, 1, 'env_reader') as Promise<{ ok: boolean }>).then((turn) => {
      served = true;
      return turn;
    });
    close(running[0] as ServerResponse);
    expect(await read).toEqual({ ok: true });
    expect(served).toBe(true);
    expect(inFlight.load).toEqual({ running: 4, waiting: 150 });
    expect(shed).toEqual([]);
    void queued;
  });

  it('lets a smaller share pass a page that waits for room only when the page’s share runs more', async () => {
    const { inFlight } = limit({ max: 4, queue: 10 });
    const a = [response(), response(), response()];
    for (const res of a) inFlight.enter(res, 1, 'env_a');
    const order: string[] = [];
    // env_a's page needs 4 and waits; env_b (running nothing) fits in the free turn and goes.
    const page = inFlight.enter(response(), 4, 'env_a') as Promise<unknown>;
    void page.then(() => order.push('page'));
    const b = response();
    expect(await (inFlight.enter(b, 1, 'env_b') as Promise<unknown>)).toEqual({ ok: true });
    // Now both run: a later env_b request waits behind the page (env_b runs 1, env_a 3: env_b is
    // chosen, but it does not fit either, and nothing passes the one chosen).
    const b2 = inFlight.enter(response(), 1, 'env_b') as Promise<unknown>;
    void b2.then(() => order.push('b2'));
    for (const res of a) close(res);
    close(b);
    await page;
    await Promise.resolve();
    expect(order[0]).toBe('b2');
    expect(order).toContain('page');
  });

  it('refuses waiters of every environment at their own deadline', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { inFlight, shed } = limit({ max: 1, queue: 10, timeoutMs: 1_000 });
    const running = response();
    inFlight.enter(running, 1, 'env_a');
    const a = inFlight.enter(response(), 1, 'env_a') as Promise<{ ok: boolean; reason?: string }>;
    vi.advanceTimersByTime(600);
    const b = inFlight.enter(response(), 1, 'env_b') as Promise<{ ok: boolean; reason?: string }>;
    vi.advanceTimersByTime(400);
    expect(await a).toMatchObject({ ok: false, reason: 'timeout' });
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    vi.advanceTimersByTime(600);
    expect(await b).toMatchObject({ ok: false, reason: 'timeout' });
    expect(shed).toEqual(['timeout', 'timeout']);
    expect(inFlight.load).toEqual({ running: 1, waiting: 0 });
    close(running);
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('keeps counting an environment that went idle and came back while others waited', async () => {
    const { inFlight } = limit({ max: 1, queue: 10 });
    const a1 = response();
    inFlight.enter(a1, 1, 'env_a');
    const a2 = response();
    const second = inFlight.enter(a2, 1, 'env_a') as Promise<unknown>;
    close(a1);
    await second;
    // env_a's last request ends: it has nothing running or waiting, and is forgotten.
    close(a2);
    expect(inFlight.runningOf('env_a')).toBe(0);
    const b1 = response();
    expect(inFlight.enter(b1, 1, 'env_b')).toEqual({ ok: true });
    const a3 = response();
    const third = inFlight.enter(a3, 1, 'env_a') as Promise<unknown>;
    const fourth = inFlight.enter(response(), 1, 'env_b') as Promise<unknown>;
    close(b1);
    // Both ran nothing: the earlier arrival (a3) goes, and is counted for env_a.
    expect(await third).toEqual({ ok: true });
    expect([inFlight.runningOf('env_a'), inFlight.runningOf('env_b')]).toEqual([1, 0]);
    close(a3);
    expect(await fourth).toEqual({ ok: true });
    expect(inFlight.runningOf('env_b')).toBe(1);
  });
});
