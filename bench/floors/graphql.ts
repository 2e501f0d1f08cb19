/**
 * The GraphQL floor (bench/README.md, "Floors (issue #35)"): `POST /client/graphql`
 * `{ organization(id) { id name } }` through graphql-yoga called as Atrium calls it
 * (rest-facade/src/pipeline/graphql.ts: `yoga.fetch` with the body already read and parsed, handed
 * over by a request-parser plugin), over a one-field schema whose resolver reads the organization
 * by id in the token's environment, after the token check and the held-permissions read
 * (floors/common.ts).
 */
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { claimsOf, environmentId, heldPermissions, listen, send, sql } from './common.ts';

/**
 * `floor:graphql-hardened` (graphql-hardened.ts) adds Atrium's own yoga plugins
 * (rest-facade/src/pipeline/graphql.ts `graphqlHardening`: graphql-armor's document limits and
 * the error mapping), to tell what they cost apart from the rest of Atrium's request.
 */
const hardening: Plugin<Context>[] = process.argv[1]?.endsWith('graphql-hardened.ts')
  ? ((await import('@atrium/rest-facade')).graphqlHardening(
      { log: { error: (...args: unknown[]) => console.error(...args) } } as never,
      { introspection: true },
    ) as unknown as Plugin<Context>[])
  : [];

interface Context {
  org: string;
  body: Record<string, unknown>;
}

const schema = createSchema<Context>({
  typeDefs: 'type Organization { id: ID! name: String! } type Query { organization(id: ID!): Organization }',
  resolvers: {
    Query: {
      organization: async (_root: unknown, { id }: { id: string }, ctx: Context) => {
        if (id !== ctx.org) return null;
        const [row] = await sql<{ id: string; name: string }[]>`
          select id, name from organizations where environment_id = ${environmentId} and id = ${id}`;
        return row ?? null;
      },
    },
  },
});

const parsedBody: Plugin<Context> = {
  onRequestParse: ({ serverContext, setRequestParser }) => {
    const body = (serverContext as Partial<Context> | undefined)?.body;
    if (body !== undefined) setRequestParser(() => body);
  },
};

const yoga = createYoga<Context>({
  schema,
  graphqlEndpoint: '/client/graphql',
  graphiql: false,
  landingPage: false,
  cors: false,
  logging: false,
  maskedErrors: true,
  maxRequestBodySize: false,
  plugins: [...hardening, parsedBody],
});

async function readBody(req: import('node:http').IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

listen(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/client/graphql') return send(res, 404, { message: 'not found' });
  const claims = await claimsOf(req);
  if (!claims || !(await heldPermissions(claims))) {
    req.resume();
    return send(res, 403, { errors: [{ message: 'forbidden' }] });
  }
  const body = await readBody(req);
  const headers = { 'content-type': 'application/json', accept: String(req.headers.accept ?? 'application/json') };
  const response = await yoga.fetch(
    'http://localhost/client/graphql',
    { method: 'POST', headers },
    { org: String(claims.org_id), body },
  );
  const text = await response.text();
  // With its length, as Atrium writes it: without one Node sends the body chunked (more writes).
  res.writeHead(response.status, {
    'Content-Type': response.headers.get('content-type') ?? 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
});
