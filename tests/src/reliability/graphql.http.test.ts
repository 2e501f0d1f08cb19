import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientSetup, clientSetup } from '../helpers/client.ts';
import type { HttpResponse } from '../helpers/world.ts';
import { newEnvironment } from '../helpers/world.ts';
import { anyJson, type Fixture, GRAPHQL_OPERATIONS, hostileString, makeFixture } from './catalog.ts';

/**
 * `/client/graphql` under hostile input: random documents built from the schema (any field, any
 * arguments, hostile values, inline or as variables), random variables and broken documents never
 * answer 5xx, always answer GraphQL's JSON, and never an unexpected (masked) error. Then every
 * row of GRAPHQL_OPERATIONS through another organization's token shows none of A's data.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 6);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25) * 4;

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}
interface Field {
  name: string;
  args: Array<{ name: string; type: TypeRef }>;
  type: TypeRef;
}
interface FullType {
  kind: string;
  name: string;
  fields: Field[] | null;
  possibleTypes: Array<{ name: string }> | null;
}

const INTROSPECTION = `{ __schema { queryType { name } mutationType { name } types { kind name
  fields { name args { name type { ...T } } type { ...T } } possibleTypes { name } } } }
  fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`;

const named = (t: TypeRef): TypeRef => (t.ofType ? named(t.ofType) : t);
const printed = (t: TypeRef): string =>
  t.kind === 'NON_NULL'
    ? `${printed(t.ofType as TypeRef)}!`
    : t.kind === 'LIST'
      ? `[${printed(t.ofType as TypeRef)}]`
      : `${t.name}`;

let f: Fixture;
let types: Map<string, FullType>;
let roots: string[];
const stats = { requests: 0, fiveXx: 0 };
afterAll(() => {
  console.info(`[reliability] graphql fuzz: seed ${SEED}, ${stats.requests} requests, ${stats.fiveXx} 5xx`);
});

beforeAll(async () => {
  f = await makeFixture(await newEnvironment());
  const res = await f.clientHttp.post('/client/graphql', { query: INTROSPECTION });
  const schema = res.body.data.__schema;
  types = new Map((schema.types as FullType[]).map((t) => [t.name, t]));
  roots = [schema.queryType.name, schema.mutationType?.name].filter(Boolean);
});

/** A selection set for `typeName`, `depth` levels at most (scalars and enums need none). */
function selection(typeName: string, depth: number, pick: () => number): string {
  const type = types.get(typeName);
  if (!type || type.kind === 'SCALAR' || type.kind === 'ENUM') return '';
  if (type.kind === 'UNION' || type.kind === 'INTERFACE') {
    const variants = (type.possibleTypes ?? []).slice(0, 3);
    return `{ __typename ${variants.map((v) => `... on ${v.name} ${selection(v.name, depth - 1, pick) || ''}`).join(' ')} }`;
  }
  const fields = (type.fields ?? []).filter((field) => depth > 0 || leaf(field));
  if (fields.length === 0) return '{ __typename }';
  const chosen = [...new Set([pick(), pick()].map((i) => fields[i % fields.length] as Field))];
  return `{ ${chosen.map((field) => `${field.name} ${selection(named(field.type).name ?? '', depth - 1, pick)}`).join(' ')} }`;
}

const leaf = (field: Field) => ['SCALAR', 'ENUM'].includes(types.get(named(field.type).name ?? '')?.kind ?? 'SCALAR');

/** A random document over the schema: one root field, its arguments as variables or literals. */
const documentArb = fc
  .record({
    root: fc.nat(),
    field: fc.nat(),
    picks: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    values: fc.array(anyJson, { minLength: 4, maxLength: 4 }),
    literal: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    omit: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  })
  .map(({ root, field, picks, values, literal, omit }) => {
    const rootName = roots[root % roots.length] as string;
    const rootFields = types.get(rootName)?.fields ?? [];
    const chosen = rootFields[field % rootFields.length] as Field;
    let i = 0;
    const pick = () => picks[i++ % picks.length] as number;
    const declared: string[] = [];
    const variables: Record<string, unknown> = {};
    const args = chosen.args.flatMap((arg, n) => {
      if (omit[n % 4]) return [];
      const value = values[n % 4];
      if (literal[n % 4]) return [`${arg.name}: ${JSON.stringify(typeof value === 'string' ? value : String(value))}`];
      declared.push(`$v${n}: ${printed(arg.type)}`);
      variables[`v${n}`] = value;
      return [`${arg.name}: $v${n}`];
    });
    const op = rootName === roots[1] ? 'mutation' : 'query';
    const head = declared.length ? `${op} Fuzz(${declared.join(', ')})` : `${op} Fuzz`;
    const argText = args.length ? `(${args.join(', ')})` : '';
    return {
      query: `${head} { ${chosen.name}${argText} ${selection(named(chosen.type).name ?? '', 3, pick)} }`,
      variables,
    };
  });

/** Documents that are not documents, and bodies that are not GraphQL requests. */
const brokenArb = fc.oneof(
  hostileString.map((query) => ({ query, variables: {} })),
  fc
    .constantFrom('{', '{ organizations { ', 'query ($x: ID!) { organizations { id } }', 'subscription { x }')
    .map((query) => ({ query, variables: {} })),
  fc.record({ query: anyJson, variables: anyJson, operationName: anyJson }),
  anyJson.map((query) => ({ query: 'query { clientApiStatus }', variables: query })),
);

function expectGraphQLAnswer(res: HttpResponse) {
  expect(res.status, res.text).toBeLessThan(500);
  expect(res.headers.get('content-type') ?? '').toMatch(/json/);
  expect(typeof res.body, res.text).toBe('object');
  expect('data' in res.body || 'errors' in res.body, res.text).toBe(true);
  for (const error of res.body.errors ?? []) {
    expect(typeof error.message).toBe('string');
    expect(error.extensions?.code, res.text).not.toBe('INTERNAL_SERVER_ERROR');
  }
}

describe('GraphQL fuzzing', () => {
  it(`random documents over the schema never answer 5xx nor an unexpected error (seed ${SEED}, ${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 3, arbitrary: documentArb }, { weight: 1, arbitrary: brokenArb }),
        async (body) => {
          const res = await f.clientHttp.post('/client/graphql', body);
          stats.requests += 1;
          if (res.status >= 500) stats.fiveXx += 1;
          expectGraphQLAnswer(res);
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

describe('GraphQL organization isolation', () => {
  let intruders: Array<[string, ClientSetup]>;
  beforeAll(async () => {
    intruders = [
      ['another organization', await clientSetup(f.env)],
      ['another environment', await clientSetup(await newEnvironment())],
    ];
  });

  it.each(GRAPHQL_OPERATIONS.map((op) => [op.name, op] as const))('%s shows none of A’s data', async (_name, op) => {
    const ids = [f.organizationId, f.userId, f.membershipId, f.domainId, f.invitationId, f.sessionId, f.connectionId];
    const variables = op.variables?.(f);
    const own = await f.clientHttp.post('/client/graphql', { query: op.query, variables });
    expectGraphQLAnswer(own);
    for (const [who, intruder] of intruders) {
      const res = await intruder.http.post('/client/graphql', { query: op.query, variables });
      expectGraphQLAnswer(res);
      const data = JSON.stringify(res.body.data ?? null);
      if (op.namesResource) {
        const code = res.body.errors?.[0]?.extensions?.code;
        const variant = /"__typename":"\w*NotFound"/.test(data);
        expect(code === 'NOT_FOUND' || variant, `${who}: ${res.text}`).toBe(true);
        // A NotFound variant may echo the id asked for; nothing else of A's.
        for (const id of ids.filter((id) => !Object.values(variables ?? {}).includes(id))) {
          expect(data, `${who} sees ${id}`).not.toContain(id);
        }
      } else {
        for (const id of ids) expect(data, `${who} sees ${id}`).not.toContain(id);
      }
    }
  });
});
