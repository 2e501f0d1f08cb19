import { reactions } from '@atrium/routers';
import { describe, expect, it } from 'vitest';

describe('reactions (the registries a resource runs for the folders that read it)', () => {
  it('run in registration order, once per function, answering in that order', async () => {
    const seen: string[] = [];
    const r = reactions<[string], number>('a test event');
    const first = async (x: string) => {
      seen.push(`first ${x}`);
      return 1;
    };
    r.on(first);
    r.on(async (x) => {
      seen.push(`second ${x}`);
      return 2;
    });
    r.on(first);
    expect(await r.run('a')).toEqual([1, 2]);
    expect(seen).toEqual(['first a', 'second a']);
  });

  it('refuse to run with none registered: a skipped reaction would break a guarantee', async () => {
    await expect(reactions<[]>('a lonely event').run()).rejects.toThrow(
      'no reaction to a lonely event is registered (app-router.ts)',
    );
  });

  it('stop at the first reaction that throws (the caller rolls its transaction back)', async () => {
    const r = reactions<[]>('a failing event');
    let later = false;
    r.on(async () => {
      throw new Error('refused');
    });
    r.on(async () => {
      later = true;
    });
    await expect(r.run()).rejects.toThrow('refused');
    expect(later).toBe(false);
  });
});
