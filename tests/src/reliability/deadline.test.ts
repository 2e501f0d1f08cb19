import { type Deadlined, Deadlines } from '@atrium/rest-facade';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** A call of the deadline's: its `due` is written by `start`. */
const call = (name: string) => ({ name, due: 0 }) as Call;
type Call = { name: string; due: number; deadline?: Deadlined['deadline'] };

describe('Deadlines (the request deadline, one interval for every call)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('cuts a call still running past the deadline, within one tick, and never before', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    const cut: string[] = [];
    const deadlines = new Deadlines<Call, string>(1_000, (c, codec) => cut.push(`${c.name} ${codec}`));
    expect(deadlines.tickMs).toBe(100);
    const [slow, quick] = [call('slow'), call('quick')];
    deadlines.start(slow, 'rest');
    vi.advanceTimersByTime(500);
    deadlines.start(quick, 'graphql');
    vi.advanceTimersByTime(499);
    expect(cut).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(cut).toEqual(['slow rest']);
    // Its outcome comes late: dropped (end is false); the other ends in time (true) and is never cut.
    expect(deadlines.end(slow)).toBe(false);
    expect(deadlines.end(quick)).toBe(true);
    vi.advanceTimersByTime(5_000);
    expect(cut).toEqual(['slow rest']);
  });

  it('keeps no timer once no call is running', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    const deadlines = new Deadlines<Call, string>(60_000, () => {});
    expect(deadlines.tickMs).toBe(250);
    const one = call('one');
    deadlines.start(one, 'rest');
    expect(vi.getTimerCount()).toBe(1);
    deadlines.end(one);
    vi.advanceTimersByTime(250);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends calls in any order: those left are cut in start order, an ended one never', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    const cut: string[] = [];
    const deadlines = new Deadlines<Call, string>(1_000, (c) => cut.push(c.name));
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map(call) as [Call, Call, Call, Call, Call];
    for (const x of [a, b, c, d, e]) {
      deadlines.start(x, 'rest');
      vi.advanceTimersByTime(10);
    }
    // The middle, the first and the last end in time; b and d are left, in start order.
    expect([deadlines.end(c), deadlines.end(a), deadlines.end(e)]).toEqual([true, true, true]);
    expect(deadlines.end(c)).toBe(false);
    vi.advanceTimersByTime(1_200);
    expect(cut).toEqual(['b', 'd']);
    expect([deadlines.end(b), deadlines.end(d)]).toEqual([false, false]);
    // An ended call holds nothing of the list (V8 would keep it alive through a neighbour).
    for (const x of [a, b, c, d, e]) expect(x.deadline).toBeUndefined();
    // A call never started is not running.
    expect(deadlines.end(call('never'))).toBe(false);
    // Started again after all that, a call is cut on its own deadline.
    const f = call('f');
    deadlines.start(f, 'rest');
    vi.advanceTimersByTime(1_100);
    expect(cut).toEqual(['b', 'd', 'f']);
  });
});
