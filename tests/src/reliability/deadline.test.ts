import { Deadlines } from '@atrium/rest-facade';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** A call of the deadline's: its `due` is written by `start`. */
const call = (name: string) => ({ name, due: 0 });

describe('Deadlines (the request deadline, one interval for every call)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('cuts a call still running past the deadline, within one tick, and never before', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    const cut: string[] = [];
    const deadlines = new Deadlines<ReturnType<typeof call>, string>(1_000, (c, codec) =>
      cut.push(`${c.name} ${codec}`),
    );
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
    const deadlines = new Deadlines<ReturnType<typeof call>, string>(60_000, () => {});
    expect(deadlines.tickMs).toBe(250);
    const one = call('one');
    deadlines.start(one, 'rest');
    expect(vi.getTimerCount()).toBe(1);
    deadlines.end(one);
    vi.advanceTimersByTime(250);
    expect(vi.getTimerCount()).toBe(0);
  });
});
