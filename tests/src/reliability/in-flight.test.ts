import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { type Admitted, InFlightLimit, type InFlightOptions, type Turn, weightOfPage } from '@atrium/rest-facade';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** What the limit uses of a response: its `close` event and `closed` flag (a waiting caller leaving). */
const response = () => Object.assign(new EventEmitter(), { closed: false }) as unknown as ServerResponse;
const close = (res: ServerResponse) => {
  (res as { closed: boolean }).closed = true;
  (res as unknown as EventEmitter).emit('close');
};

/** A turn given at once (no promise), to be released when its call ends. */
function admitted(turn: Turn | Promise<Turn>): Admitted {
  if (turn instanceof Promise || !turn.ok) throw new Error(`expected a turn at once, got ${JSON.stringify(turn)}`);
  return turn;
}

/** A waiter's turn, once given. */
async function waited(turn: Turn | Promise<Turn>): Promise<Admitted> {
  return admitted(await turn);
}

/** What a turn looks like to the tests: taken, or refused for a reason. */
const shape = (turn: Turn) => (turn.ok ? 'ok' : turn.reason);

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
    const a = admitted(inFlight.enter(response()));
    const b = admitted(inFlight.enter(response()));
    const order: string[] = [];
    const third = waited(inFlight.enter(response())).then((turn) => {
      order.push('c');
      return turn;
    });
    const fourth = waited(inFlight.enter(response())).then((turn) => {
      order.push('d');
      return turn;
    });
    expect(inFlight.load).toEqual({ running: 2, waiting: 2 });

    b.release();
    const c = await third;
    expect(order).toEqual(['c']);
    // The turn was handed over, not given back: still two running.
    expect(inFlight.load).toEqual({ running: 2, waiting: 1 });
    a.release();
    const d = await fourth;
    expect(order).toEqual(['c', 'd']);
    c.release();
    d.release();
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('holds a turn until its call releases it, not until its response closes', async () => {
    const { inFlight } = limit({ max: 1 });
    const res = response();
    const running = admitted(inFlight.enter(res));
    let served = false;
    const next = waited(inFlight.enter(response())).then((turn) => {
      served = true;
      return turn;
    });
    // Its caller left (send and disconnect): the call still runs, and keeps the turn.
    close(res);
    await Promise.resolve();
    expect(served).toBe(false);
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    running.release();
    (await next).release();
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('gives a turn back once however often it is released (the deadline, then the call settling)', async () => {
    const { inFlight } = limit({ max: 1, queue: 10 });
    const cut = admitted(inFlight.enter(response()));
    const next = waited(inFlight.enter(response()));
    let third = false;
    const later = waited(inFlight.enter(response())).then((turn) => {
      third = true;
      return turn;
    });
    // The deadline releases the turn; the next request runs.
    cut.release();
    const second = await next;
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    // The cut call settles late and releases again: nothing more is freed, the third still waits.
    cut.release();
    await Promise.resolve();
    expect(third).toBe(false);
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    second.release();
    const last = await later;
    last.release();
    last.release();
    second.release();
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
    // The counter never went below zero: max turns, and no more, are given again.
    admitted(inFlight.enter(response()));
    expect(inFlight.enter(response())).toBeInstanceOf(Promise);
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
    const gone = response();
    const running = admitted(inFlight.enter(response()));
    const left = inFlight.enter(gone) as Promise<Turn>;
    const waits = waited(inFlight.enter(response()));
    close(gone);
    expect(await left).toMatchObject({ ok: false, reason: 'closed' });
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    running.release();
    await waits;
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
    admitted(inFlight.enter(response()));
    expect(shed).toEqual([]);
  });

  it('refuses waiters past the timeout, and gives the next turn to one still within it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { inFlight, shed } = limit({ max: 1, timeoutMs: 1_000 });
    const running = admitted(inFlight.enter(response()));
    const early = inFlight.enter(response()) as Promise<Turn>;
    vi.advanceTimersByTime(600);
    const late = inFlight.enter(response()) as Promise<Turn>;
    vi.advanceTimersByTime(400);
    expect(await early).toMatchObject({ ok: false, reason: 'timeout', error: { status: 503 } });
    expect(shed).toEqual(['timeout']);
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    running.release();
    expect(shape(await late)).toBe('ok');
    vi.advanceTimersByTime(1_000);
    expect(shed).toEqual(['timeout']);
    expect(inFlight.load).toEqual({ running: 1, waiting: 0 });
  });

  it('refuses a waiter reached after its deadline even before its timer fires', async () => {
    // Only the clock is fake: the (unref'd) timer stays pending while the deadline passes.
    vi.useFakeTimers({ toFake: ['performance'] });
    const { inFlight, shed } = limit({ max: 1, timeoutMs: 1_000 });
    const running = admitted(inFlight.enter(response()));
    const stale = inFlight.enter(response()) as Promise<Turn>;
    vi.advanceTimersByTime(1_001);
    running.release();
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
    const small = Array.from({ length: 6 }, () => admitted(inFlight.enter(response())));
    const order: string[] = [];
    const pageTurn = waited(inFlight.enter(response(), 4)).then((turn) => {
      order.push('page');
      return turn;
    });
    // Two turns are free, but the page came first and needs four.
    const later = waited(inFlight.enter(response())).then(() => order.push('small'));
    expect(inFlight.load).toEqual({ running: 6, waiting: 2 });
    small[0]?.release();
    // Three turns free: still not enough for the page, and the small request stays behind it.
    expect(inFlight.load).toEqual({ running: 5, waiting: 2 });
    small[1]?.release();
    const page = await pageTurn;
    expect(inFlight.load).toEqual({ running: 8, waiting: 1 });
    small[2]?.release();
    await later;
    expect(order).toEqual(['page', 'small']);
    expect(inFlight.load).toEqual({ running: 8, waiting: 0 });
    page.release();
    expect(inFlight.load).toEqual({ running: 4, waiting: 0 });
  });

  it('lets a call heavier than the whole limit run alone', async () => {
    const { inFlight } = limit({ max: 2 });
    const heavy = admitted(inFlight.enter(response(), 4));
    expect(inFlight.load).toEqual({ running: 2, waiting: 0 });
    // It gives back what it took (the limit), not its weight.
    heavy.release();
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('gives a freed turn to the waiting environment that runs less, first come first served within one', async () => {
    const { inFlight } = limit({ max: 2, queue: 10 });
    const busy = [admitted(inFlight.enter(response(), 1, 'env_a')), admitted(inFlight.enter(response(), 1, 'env_a'))];
    const order: string[] = [];
    const wait = (name: string, share: string) =>
      waited(inFlight.enter(response(), 1, share)).then((turn) => {
        order.push(name);
        return turn;
      });
    // env_a queued first (a3, a4), then env_b (b1, b2): arrival order alone would serve a3 and a4 first.
    const a3 = wait('a3', 'env_a');
    const a4 = wait('a4', 'env_a');
    const b1 = wait('b1', 'env_b');
    const b2 = wait('b2', 'env_b');
    expect(inFlight.load).toEqual({ running: 2, waiting: 4 });

    busy[0]?.release();
    const b1Turn = await b1;
    // env_b ran nothing, env_a one: env_b goes first.
    expect(order).toEqual(['b1']);
    expect([inFlight.runningOf('env_a'), inFlight.runningOf('env_b')]).toEqual([1, 1]);
    busy[1]?.release();
    const a3Turn = await a3;
    // One each running: the earlier arrival (a3) among equals, and env_a's own order kept.
    expect(order).toEqual(['b1', 'a3']);
    // a3 done: env_a runs nothing, env_b one, so a4 goes before b2, although b2 waited longer.
    a3Turn.release();
    const a4Turn = await a4;
    b1Turn.release();
    const b2Turn = await b2;
    expect(order).toEqual(['b1', 'a3', 'a4', 'b2']);
    a4Turn.release();
    b2Turn.release();
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
    // An environment with nothing running or waiting is forgotten.
    expect([inFlight.runningOf('env_a'), inFlight.runningOf('env_b')]).toEqual([0, 0]);
  });

  it('serves a second environment at the next free turn however long the first one’s queue', async () => {
    const { inFlight, shed } = limit({ max: 4, queue: 200 });
    const running = Array.from({ length: 4 }, () => admitted(inFlight.enter(response(), 1, 'env_busy')));
    const queued = Array.from({ length: 150 }, () => inFlight.enter(response(), 1, 'env_busy') as Promise<unknown>);
    let served = false;
    const read = waited(inFlight.enter(response(), 1, 'env_reader')).then((turn) => {
      served = true;
      return turn;
    });
    running[0]?.release();
    await read;
    expect(served).toBe(true);
    expect(inFlight.load).toEqual({ running: 4, waiting: 150 });
    expect(shed).toEqual([]);
    void queued;
  });

  it('lets a smaller share pass a page that waits for room only when the page’s share runs more', async () => {
    const { inFlight } = limit({ max: 4, queue: 10 });
    const a = Array.from({ length: 3 }, () => admitted(inFlight.enter(response(), 1, 'env_a')));
    const order: string[] = [];
    // env_a's page needs 4 and waits; env_b (running nothing) fits in the free turn and goes.
    const page = waited(inFlight.enter(response(), 4, 'env_a'));
    void page.then(() => order.push('page'));
    const b = await waited(inFlight.enter(response(), 1, 'env_b'));
    // Now both run: a later env_b request waits behind the page (env_b runs 1, env_a 3: env_b is
    // chosen, but it does not fit either, and nothing passes the one chosen).
    const b2 = waited(inFlight.enter(response(), 1, 'env_b')).then((turn) => {
      order.push('b2');
      return turn;
    });
    for (const turn of a) turn.release();
    b.release();
    // b2 ran first; the page runs once it has room, when b2 ends.
    (await b2).release();
    (await page).release();
    expect(order).toEqual(['b2', 'page']);
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses waiters of every environment at their own deadline', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { inFlight, shed } = limit({ max: 1, queue: 10, timeoutMs: 1_000 });
    const running = admitted(inFlight.enter(response(), 1, 'env_a'));
    const a = inFlight.enter(response(), 1, 'env_a') as Promise<Turn>;
    vi.advanceTimersByTime(600);
    const b = inFlight.enter(response(), 1, 'env_b') as Promise<Turn>;
    vi.advanceTimersByTime(400);
    expect(await a).toMatchObject({ ok: false, reason: 'timeout' });
    expect(inFlight.load).toEqual({ running: 1, waiting: 1 });
    vi.advanceTimersByTime(600);
    expect(await b).toMatchObject({ ok: false, reason: 'timeout' });
    expect(shed).toEqual(['timeout', 'timeout']);
    expect(inFlight.load).toEqual({ running: 1, waiting: 0 });
    running.release();
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
  });

  it('keeps counting an environment that went idle and came back while others waited', async () => {
    const { inFlight } = limit({ max: 1, queue: 10 });
    const a1 = admitted(inFlight.enter(response(), 1, 'env_a'));
    const second = waited(inFlight.enter(response(), 1, 'env_a'));
    a1.release();
    const a2 = await second;
    // env_a's last request ends: it has nothing running or waiting, and is forgotten.
    a2.release();
    expect(inFlight.runningOf('env_a')).toBe(0);
    const b1 = admitted(inFlight.enter(response(), 1, 'env_b'));
    const third = waited(inFlight.enter(response(), 1, 'env_a'));
    const fourth = waited(inFlight.enter(response(), 1, 'env_b'));
    b1.release();
    // Both ran nothing: the earlier arrival (a3) goes, and is counted for env_a.
    const a3 = await third;
    expect([inFlight.runningOf('env_a'), inFlight.runningOf('env_b')]).toEqual([1, 0]);
    // A turn released late (after its environment went idle and came back) counts against its own.
    a1.release();
    expect(inFlight.runningOf('env_a')).toBe(1);
    a3.release();
    await fourth;
    expect(inFlight.runningOf('env_b')).toBe(1);
  });
});
