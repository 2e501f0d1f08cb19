// What both SSO benches stand on (bench/sso.ts, bench/sso-sign-in.ts): the server in this process
// on DATABASE_URL (else PGlite in memory), one environment, an organization with a verified
// domain, a SAML connection and a default redirect URI.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '@atrium/rest-facade';
import { createConnection, createEnvironment, scopeOf } from '@atrium/routers';
import { benchDeps, openBenchDb } from './in-process.ts';

export const CALLBACK = 'https://app.example.com/callback';

/** `port` 0 (the default) lets the system pick the server's port. */
export async function ssoBenchWorld(name: string, port = 0) {
  const handle = await openBenchDb();
  const deps = benchDeps(handle, { apiKeyCacheTtlMs: 2_000, webhooksAllowPrivate: true });
  // Rate limits off, as bench/run.ts runs its scenarios: the bench measures throughput, not the limiter.
  const server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1', rateLimit: false }).handler);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  deps.tokens.issuer = base;

  const env = await createEnvironment(deps, { name: `${name}-${Date.now()}` });
  const scope = await scopeOf(deps, env.environment_id);
  const api = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${env.api_key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ id: string }>;
  };
  const domain = `bench-${Date.now().toString(36)}.com`;
  const organization = await api('/organizations', { name: 'Bench SSO', domain_data: [{ domain, state: 'verified' }] });
  const made = await createConnection(scope, {
    organization_id: organization.id,
    connection_type: 'GenericSAML',
    name: 'Bench IdP',
    state: 'active',
  } as Parameters<typeof createConnection>[1]);
  await api('/user_management/redirect_uris', { uri: CALLBACK, default: true });
  return { handle, deps, server, base, env, scope, api, domain, organization, made };
}
