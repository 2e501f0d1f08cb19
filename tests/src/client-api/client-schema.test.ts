import { createRequire } from 'node:module';
import { clientSchema } from '@atrium/routers';
import type * as GraphQL from 'graphql';
import { describe, expect, it } from 'vitest';

// The official widgets' queries are written against this schema: a change to it is a change of
// the contract, made on purpose (update client-schema.sdl with it), never a side effect.
describe('the client GraphQL schema', () => {
  it('prints exactly as client-schema.sdl', async () => {
    // The schema's own copy of graphql (CommonJS, as Pothos loads it), not vitest's ESM one.
    const { printSchema } = createRequire(import.meta.url)('graphql') as typeof GraphQL;
    await expect(printSchema(clientSchema())).toMatchFileSnapshot('./client-schema.sdl');
  });
});
