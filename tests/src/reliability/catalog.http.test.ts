import { describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';
import { type Fixture, OPERATIONS } from './catalog.ts';

/** Ids that look like ids, to match the catalogue's paths against the document's templates. */
const sample = new Proxy({} as Fixture, { get: (_t, key) => `${String(key)}_01SAMPLE` });

describe('the reliability catalogue', () => {
  it('covers every REST operation of the OpenAPI document', async () => {
    const world = await getWorld();
    const doc = (await (await fetch(`${world.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method))
          documented.push(`${method.toUpperCase()} ${template}`);
      }
    }
    const missing = documented.filter((entry) => {
      const [method, template] = entry.split(' ') as [string, string];
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      return !OPERATIONS.some((op) => op.method === method && pattern.test(op.path(sample)));
    });
    expect(missing).toEqual([]);
    expect(OPERATIONS).toHaveLength(documented.length);
  });
});
