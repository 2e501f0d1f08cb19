import { GRAPHQL_LIMITS, graphqlHardening, type YogaContext } from '@atrium/rest-facade';
import { ApiError, type ClientScope, type Deps } from '@atrium/routers';
import { buildSchema } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it, vi } from 'vitest';
import { clientFor, clientSetup } from '../helpers/client.ts';
import { newEnvironment } from '../helpers/world.ts';
import { startOwnApp } from '../reliability/own-app.ts';

/** `__type … ofType` nested `levels` deep (introspection by `__type` counts towards the depth limit). */
function nested(levels: number): string {
  return `{ __type(name: "Query") { fields { type ${'{ ofType '.repeat(levels)}{ name }${' }'.repeat(levels)} } } }`;
}

describe('/client/graphql document limits (graphql-armor)', () => {
  it('answers a document within the limits and refuses one past the depth limit, running nothing', async () => {
    const env = await newEnvironment();
    const { graphql } = await clientSetup(env);
    const within = await graphql(nested(2));
    expect(within.status).toBe(200);
    expect(within.body.data.__type.fields.length).toBeGreaterThan(0);
    const deep = await graphql(nested(GRAPHQL_LIMITS.maxDepth.n));
    expect(deep.body.data).toBeUndefined();
    expect(deep.body.errors[0].message).toMatch(/depth limit of 8 exceeded/i);
  });

  it('refuses too many aliases and too many tokens with a JSON error', async () => {
    const env = await newEnvironment();
    const { graphql } = await clientSetup(env);
    const aliases = Array.from({ length: GRAPHQL_LIMITS.maxAliases.n + 1 }, (_, i) => `a${i}: clientApiStatus`);
    const many = await graphql(`{ ${aliases.join(' ')} }`);
    expect(many.body.data).toBeUndefined();
    expect(many.body.errors[0].message).toMatch(/aliases limit/i);
    const long = await graphql(`{ ${'clientApiStatus '.repeat(GRAPHQL_LIMITS.maxTokens.n)}}`);
    expect(long.body.data).toBeUndefined();
    expect(long.body.errors[0].message).toMatch(/token limit/i);
  });
});

describe('/client/graphql introspection', () => {
  it('is answered by default (development) and refused when turned off (production)', async () => {
    const env = await newEnvironment();
    const setup = await clientSetup(env);
    const query = '{ __schema { queryType { name } } }';
    expect((await setup.graphql(query)).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });

    const own = await startOwnApp(env.deps, { graphqlIntrospection: false, accessLog: false });
    try {
      const res = await fetch(`${own.url}/client/graphql`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${setup.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      const body = await res.json();
      expect(body.data).toBeUndefined();
      expect(body.errors[0].message).toMatch(/introspection/i);
      // Ordinary fields still work there.
      const status = await fetch(`${own.url}/client/graphql`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${setup.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: '{ clientApiStatus }' }),
      });
      expect(await status.json()).toEqual({ data: { clientApiStatus: 'ok' } });
    } finally {
      await own.close();
    }
  });
});

/** A schema whose fields throw what services throw, served with the transport's own plugins. */
function errorsYoga(deps: Deps) {
  const schema = buildSchema(
    'type Query { forbidden: String  missing: String  invalid: String  malformed: String  anonymous: String  boom: String  fine: String }',
  );
  const rootValue = {
    forbidden: () => {
      throw new ApiError(403, 'forbidden', 'The token lacks widgets:users-table:manage.');
    },
    missing: () => {
      throw new ApiError(404, 'entity_not_found', 'Organization not found.');
    },
    invalid: () => {
      throw new ApiError(422, 'invalid_request_parameters', 'Validation failed.', [
        { field: 'email', code: 'invalid', message: 'Not an e-mail address.' },
      ]);
    },
    malformed: () => {
      throw new ApiError(400, 'bad_request', 'Bad cursor.');
    },
    anonymous: () => {
      throw new ApiError(401, 'unauthorized', 'Unauthorized.');
    },
    boom: () => {
      throw new Error('connection to 10.0.0.7 refused (secret detail)');
    },
    fine: () => 'ok',
  };
  const withRoot: Plugin<YogaContext> = {
    onExecute: ({ setExecuteFn, executeFn }) => setExecuteFn((args) => executeFn({ ...args, rootValue })),
  };
  return createYoga<YogaContext>({
    schema,
    logging: false,
    plugins: [...graphqlHardening(deps, { introspection: true }), withRoot],
  });
}

describe('/client/graphql error masking', () => {
  it('maps ApiError statuses onto extensions.code, masks the unexpected and logs it with the request id', async () => {
    const error = vi.fn();
    const deps = { log: { error } } as unknown as Deps;
    const yoga = errorsYoga(deps);
    const query = '{ forbidden missing invalid malformed anonymous boom fine }';
    const context = { scope: {} as ClientScope, requestId: 'req-masking-1' };
    const res = await yoga.fetch(
      'http://localhost/graphql',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) },
      context,
    );
    const body = await res.json();
    expect(body.data).toEqual({
      forbidden: null,
      missing: null,
      invalid: null,
      malformed: null,
      anonymous: null,
      boom: null,
      fine: 'ok',
    });
    const byField = Object.fromEntries(body.errors.map((e: { path: string[] }) => [e.path[0], e]));
    expect(byField.forbidden).toMatchObject({
      message: 'The token lacks widgets:users-table:manage.',
      extensions: { code: 'FORBIDDEN', status: 403 },
    });
    expect(byField.missing.extensions).toEqual({ code: 'NOT_FOUND', status: 404 });
    expect(byField.invalid.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      status: 422,
      errors: [{ field: 'email', code: 'invalid', message: 'Not an e-mail address.' }],
    });
    expect(byField.malformed.extensions).toEqual({ code: 'BAD_USER_INPUT', status: 400 });
    expect(byField.anonymous.extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
    expect(byField.boom).toMatchObject({
      message: 'Unexpected error.',
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    expect(JSON.stringify(body)).not.toContain('secret detail');
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0]?.[0]).toMatchObject({ req_id: 'req-masking-1', err: expect.any(Error) });
  });

  it('a refusal before execution (no token) is FORBIDDEN with status 403', async () => {
    const env = await newEnvironment();
    const res = await clientFor(env, 'not-a-token').http.post('/client/graphql', { query: '{ clientApiStatus }' });
    expect(res.status).toBe(403);
    expect(res.body.errors[0].extensions).toEqual({ code: 'FORBIDDEN', status: 403 });
  });
});
