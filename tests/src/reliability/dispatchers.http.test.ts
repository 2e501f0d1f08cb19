import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getWorld, HttpClient, type HttpResponse, newEnvironment } from '../helpers/world.ts';
import { type Fixture, makeFixture, OPERATIONS, type Operation, segment } from './catalog.ts';
import { startBridgeApp } from './openapi-bridge.ts';
import { startOwnApp } from './own-app.ts';

/**
 * The server's REST dispatch (route table → procedure) and the OpenAPI bridge
 * (trpc-to-openapi's own handler, built by openapi-bridge.ts) answer every operation of the
 * OpenAPI document alike: status, headers (but the request id and date) and body, byte for
 * byte, for valid and bad input. A valid write runs once on each, each on its own copy of the
 * fixture, so the ids, timestamps, secrets and unique values it makes are the only
 * differences allowed.
 */

type Apps = { direct: HttpClient; bridge: HttpClient };
/** A request; `bridgePath` when the bridge's copy aims at the second fixture. */
type Send = { method: string; path: string; bridgePath?: string; raw?: string; contentType?: string };

/** Per answer or per server, not per dispatch (`keep-alive`: the bridge's server keeps idle connections longer). */
const IGNORED_HEADERS = new Set(['x-request-id', 'date', 'content-length', 'keep-alive']);

/** Values a write makes anew each time: ids, timestamps, tokens and secrets. */
const FRESH = [
  /\b[a-z]+(?:_[a-z]+)*_[0-9A-HJKMNP-TV-Z]{26}/g,
  /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g,
  /eyJ[\w-]+\.[\w-]+\.[\w-]+/g,
  /"(secret|token|api_key|value|obfuscated_value|email|external_id|domain|verification_prefix|verification_token|slug|accept_invitation_url|link|uri)":"[^"]*"/g,
  // A role's permissions are the fixture's (unique) permission slugs.
  /"permissions":\[[^\]]*\]/g,
];

function fresh(text: string): string {
  return FRESH.reduce(
    (t, pattern) => t.replace(pattern, (m) => (m.startsWith('"') ? `${m.split(':')[0]}:"…"` : '…')),
    text,
  );
}

function headersOf(res: HttpResponse): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!IGNORED_HEADERS.has(name)) out[name] = value;
  });
  return out;
}

async function both(apps: Apps, send: Send, body?: { direct: unknown; bridge: unknown }) {
  const call = (client: HttpClient, value: unknown, path = send.path) =>
    client.request(send.method, path, {
      raw: send.raw ?? (value === undefined ? undefined : JSON.stringify(value)),
      headers:
        send.contentType || value !== undefined ? { 'Content-Type': send.contentType ?? 'application/json' } : {},
    });
  const direct = await call(apps.direct, body?.direct);
  const bridge = await call(apps.bridge, body?.bridge, send.bridgePath);
  return { direct, bridge };
}

function expectAlike(label: string, r: { direct: HttpResponse; bridge: HttpResponse }, freshAllowed = false) {
  const { direct, bridge } = r;
  expect(bridge.status, `${label}: ${bridge.text} vs ${direct.text}`).toBe(direct.status);
  expect(headersOf(bridge), label).toEqual(headersOf(direct));
  for (const res of [direct, bridge]) {
    const length = res.headers.get('content-length');
    if (length !== null) expect(Number(length), label).toBe(Buffer.byteLength(res.text));
  }
  if (freshAllowed) expect(fresh(bridge.text), label).toBe(fresh(direct.text));
  else {
    expect(bridge.text, label).toBe(direct.text);
    expect(bridge.headers.get('content-length'), label).toBe(direct.headers.get('content-length'));
  }
}

/** A body of the right fields, each of the wrong type. */
const wrongTypes = (op: Operation, f: Fixture) =>
  Object.fromEntries(Object.keys(op.body?.(f) ?? { name: 0 }).map((key) => [key, 42]));

const takesBody = (op: Operation) => op.method === 'POST' || op.method === 'PUT' || op.method === 'PATCH';

describe("the server's REST dispatch answers as the OpenAPI bridge does", () => {
  let f: Fixture;
  let g: Fixture;
  let apps: Apps;
  let close: Array<() => Promise<void>>;

  beforeAll(async () => {
    const env = await newEnvironment();
    f = await makeFixture(env);
    g = await makeFixture(env);
    const direct = await startOwnApp(env.deps, { rateLimit: false, accessLog: false });
    const bridge = await startBridgeApp(env.deps);
    const auth = { Authorization: `Bearer ${env.apiKey}` };
    apps = { direct: new HttpClient(direct.url, auth), bridge: new HttpClient(bridge.url, auth) };
    close = [direct.close, bridge.close];
  });
  afterAll(() => Promise.all(close.map((c) => c())));

  it('covers every operation of the OpenAPI document', async () => {
    const doc = (await (await fetch(`${(await getWorld()).url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.values(doc.paths).flatMap((item) =>
      Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)),
    );
    expect(OPERATIONS).toHaveLength(operations.length);
  });

  describe.each(OPERATIONS)('$method $name', (op) => {
    it('with valid input', async () => {
      const query = op.query ? '?limit=2&order=asc' : '';
      const write = takesBody(op);
      const body = write
        ? { direct: op.creates?.validBody(f) ?? {}, bridge: op.creates?.validBody(g) ?? {} }
        : undefined;
      const needed = op.readQuery ? `${query ? '&' : '?'}${op.readQuery(f)}` : '';
      const send = {
        method: op.method,
        path: op.path(f) + query + needed,
        bridgePath: write ? op.path(g) + query : undefined,
      };
      const r = await both(apps, send, body);
      expectAlike('valid', r, write);
      if (op.creates) expect(r.direct.status).toBe(op.creates.status ?? 201);
    });

    it.runIf(op.hasParam)('with an unknown id, and percent-encoded path parameters', async () => {
      const body = takesBody(op) ? { direct: {}, bridge: {} } : undefined;
      // Dot segments resolve to another path (`/organizations/x/groups/..` is `/organizations/x`):
      // asked only of reads, which change nothing whichever operation they reach.
      const dots = op.method === 'GET' ? ['..', 'raw:%2e%2e', '.'] : [];
      for (const param of ['nope_01UNKNOWN', 'a b/ü', 'raw:%zz', 'raw:%E0%A4%A', "'; drop", ...dots]) {
        expectAlike(param, await both(apps, { method: op.method, path: op.path(f, param) }, body), takesBody(op));
      }
      if (op.method !== 'DELETE') {
        // The fixture's own id with every character escaped reads the same record.
        const at = op.path(f, 'PARAM').split('/').indexOf('PARAM');
        const real = decodeURIComponent(op.path(f).split('/')[at] ?? 'x');
        const escaped = [...real].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
        expectAlike(
          'escaped id',
          await both(apps, { method: op.method, path: op.path(f, `raw:${escaped}`) }, body),
          true,
        );
      }
    });

    it.runIf(takesBody(op))('with an invalid body, malformed JSON and the wrong content type', async () => {
      const path = op.path(f);
      const invalid = wrongTypes(op, f);
      const sent = await both(apps, { method: op.method, path }, { direct: invalid, bridge: invalid });
      // Some operations take no body at all (verify): they run, and touch `updated_at`.
      expectAlike('invalid body', sent, sent.direct.status < 300);
      expectAlike('array body', await both(apps, { method: op.method, path, raw: '[1,2]' }, { direct: 0, bridge: 0 }));
      expectAlike(
        'malformed',
        await both(apps, { method: op.method, path, raw: '{"name":' }, { direct: 0, bridge: 0 }),
      );
      const text = { method: op.method, path, raw: '{}', contentType: 'text/plain' };
      expectAlike('content type', await both(apps, text));
    });

    it.runIf(op.query !== undefined)('with a bad query', async () => {
      const keys = Object.keys(op.query ?? {});
      for (const query of [
        'limit=abc&order=sideways',
        'limit=0',
        'limit=101',
        'limit=1.5',
        'limit=&after=',
        'before=x&after=y',
        keys.map((k) => `${k}=${segment("'; drop")}`).join('&'),
        keys.map((k) => `${k}=a&${k}=b`).join('&'),
        keys.map((k) => `${k}[]=true`).join('&'),
      ]) {
        expectAlike(query, await both(apps, { method: op.method, path: `${op.path(f)}?${query}` }));
      }
    });
  });
});
