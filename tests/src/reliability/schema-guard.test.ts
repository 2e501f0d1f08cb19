import { appRouter } from '@atrium/routers';
import { describe, expect, it } from 'vitest';

type ZodLike = { _zod: { def: Record<string, any> } };

/** Paths to fields that trpc-to-openapi would silently coerce (see StrictBoolean). */
function coercibleFields(schema: ZodLike, path: string, out: string[]): void {
  const def = schema._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
      coercibleFields(def.innerType, path, out);
      return;
    case 'array':
      coercibleFields(def.element, `${path}[]`, out);
      return;
    case 'object':
      for (const [key, value] of Object.entries(def.shape as Record<string, ZodLike>)) {
        coercibleFields(value, path ? `${path}.${key}` : key, out);
      }
      return;
    case 'boolean':
    case 'number':
    case 'bigint':
    case 'date':
      out.push(path);
      return;
    default:
      return;
  }
}

describe('request body schemas', () => {
  it('declare no field that the OpenAPI bridge would coerce (use StrictBoolean / StrictInt)', () => {
    const offenders: string[] = [];
    for (const [name, procedure] of Object.entries(appRouter._def.procedures as Record<string, any>)) {
      const openapi = procedure._def.meta?.openapi;
      if (!openapi || openapi.method === 'GET' || openapi.method === 'DELETE') continue;
      for (const input of procedure._def.inputs as ZodLike[]) {
        const fields: string[] = [];
        coercibleFields(input, '', fields);
        offenders.push(...fields.map((field) => `${name}: ${field}`));
      }
    }
    expect(offenders).toEqual([]);
  });
});
