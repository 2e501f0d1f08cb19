/**
 * What both floors share (bench/README.md, "Floors (issue #35)"): the least work a client-surface
 * request must do on Atrium's stack, and nothing more. node:http; the widget token verified
 * by jose against the environment's published keys (RS256, `typ`, `iss`, `aud`, expiry) the
 * first time it is seen, then remembered by the token string as Atrium does (its expiry checked
 * on every use); postgres.js with prepared statements; and, on every request, the one read that
 * keeps Atrium's guarantee that a revoked membership or a demotion counts at once: the widget
 * permissions the user's active membership grants now.
 *
 * Started by bench/run.ts as its own process, with PORT, DATABASE_URL, ATRIUM_URL (whose JWKS it
 * fetches once), ISSUER and CLIENT_ID in its environment.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, type JWTPayload, jwtVerify } from 'jose';
import postgres from 'postgres';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const clientId = required('CLIENT_ID');
const issuer = required('ISSUER');

/**
 * Two pipelined connections, every statement prepared and planned once: Atrium's statement pool
 * and connection settings (db/src/client.ts).
 */
export const sql = postgres(required('DATABASE_URL'), {
  max: 2,
  prepare: true,
  onnotice: () => {},
  connection: { application_name: 'atrium-floor', timezone: 'UTC', plan_cache_mode: 'force_generic_plan' },
});

const [environment] = await sql<{ id: string }[]>`select id from environments where client_id = ${clientId}`;
if (!environment) throw new Error(`no environment has client id ${clientId}`);
/** The environment of the token's audience, read once (Atrium caches it too). */
export const environmentId = environment.id;

const jwks = createLocalJWKSet(await (await fetch(`${required('ATRIUM_URL')}/sso/jwks/${clientId}`)).json());

/** Verified tokens by the token itself; each use checks only the expiry (Atrium's verifiedTokens). */
const verified = new Map<string, JWTPayload>();

/** The verified claims of `Authorization: Bearer <token>`, or undefined. */
export async function claimsOf(req: IncomingMessage): Promise<JWTPayload | undefined> {
  const header = req.headers.authorization;
  if (!header?.startsWith('Bearer ')) return undefined;
  const token = header.slice(7);
  let payload = verified.get(token);
  if (!payload) {
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        algorithms: ['RS256'],
        typ: 'atrium-client+jwt',
        issuer,
        audience: `${clientId}:client_api`,
      }));
    } catch {
      return undefined;
    }
    verified.set(token, payload);
  }
  return typeof payload.exp === 'number' && payload.exp * 1000 > Date.now() ? payload : undefined;
}

/**
 * The widget token's permissions its user's active membership still grants (Atrium's
 * `widget_permissions_held`, read on every use); undefined without an active membership.
 */
export async function heldPermissions(payload: JWTPayload): Promise<Set<string> | undefined> {
  const claimed = Array.isArray(payload.permissions) ? (payload.permissions as string[]) : [];
  const rows = await sql<{ slug: string | null }[]>`
    select p.slug from organization_memberships om
      left join organization_membership_roles mr on mr.organization_membership_id = om.id
      left join role_permissions rp on rp.role_id = mr.role_id
      left join permissions p on p.id = rp.permission_id and p.slug like 'widgets:%'
    where om.environment_id = ${environmentId} and om.organization_id = ${String(payload.org_id)}
      and om.user_id = ${String(payload.sub)} and om.status = 'active'`;
  if (rows.length === 0) return undefined;
  const held = new Set(rows.flatMap((row) => (row.slug === null ? [] : [row.slug])));
  return new Set(claimed.filter((slug) => held.has(slug)));
}

export function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Listens on PORT with Atrium's keep-alive; answers 500 to what a handler throws. */
export function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void {
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handler(req, res).catch((error: unknown) => {
      // The load generator closes its connections at the end of a run, some mid-request.
      if (req.destroyed) return;
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      if (!res.headersSent) send(res, 500, { message: 'floor failed' });
    });
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`listening ${port}\n`);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => server.close(() => void sql.end({ timeout: 1 }).then(() => process.exit(0))));
  }
}
