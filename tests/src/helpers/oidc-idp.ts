import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (oidc-provider 9) on 127.0.0.1 for the OIDC tests: one registered
 * confidential client, a tiny login form (any login, no password: the person is whoever the test
 * types), consent granted without a page, and ways to tamper with what it answers so the relying
 * party's checks can be shown to refuse it.
 */

/** How a test rewrites the id_token the token endpoint returns (the real provider checked the code and PKCE first). */
export interface IdTokenTamper {
  /** Changes to the claims (`undefined` removes a claim). */
  claims?: Record<string, unknown>;
  /**
   * How it is signed again: `provider` (the provider's own key: only the claims are wrong), `other`
   * (a key the provider does not publish; `kid` kept unless `kid` is given), `hs256-secret`
   * (HS256 keyed with the client secret), `none` (unsigned).
   */
  signer?: 'provider' | 'other' | 'hs256-secret' | 'none';
  /** The `kid` of the header (with `other`: a kid the JWKS does not have). */
  kid?: string;
}

export interface OidcIdpOptions {
  /** The redirect URIs of the client (the connections' `oidcRedirectUri`). */
  redirectUris: string[];
  /** The claims of the person who signs in with `login` (defaults: a verified address at example.com). */
  claimsOf?: (login: string) => Record<string, unknown>;
  /** `userinfo-only`: the id_token carries only `sub` and protocol claims; the rest is at userinfo. */
  idTokenClaims?: 'all' | 'userinfo-only';
  /** Claims beyond the standard ones that the `profile` scope releases (for claim-mapping tests). */
  extraClaims?: string[];
  /** Signing algorithm of the id_token (RS256 unless said). */
  algorithm?: 'RS256' | 'ES256';
}

export interface OidcIdp {
  issuer: string;
  discoveryEndpoint: string;
  clientId: string;
  clientSecret: string;
  /** Rewrites the next id_tokens until set back to null. */
  tamper: IdTokenTamper | null;
  /** Every request the provider received (method and path), in order. */
  requests: string[];
  /** The token requests the provider answered, with their status. */
  tokenRequests: { grantType: string | undefined; status: number }[];
  /**
   * Follows an authorization URL as a browser would: the login form filled with `login`, then the
   * redirect back. Resolves with the callback URL the provider sent the browser to.
   */
  signIn(authorizationUrl: string, login: string): Promise<URL>;
  close(): Promise<void>;
}

function defaultClaims(login: string): Record<string, unknown> {
  const [first, last] = login.split('.');
  return {
    email: `${login}@example.com`,
    email_verified: true,
    given_name: first ?? login,
    family_name: last ?? '',
    name: [first, last].filter(Boolean).join(' '),
    groups: ['engineering', 'admins'],
  };
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(uid: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Loopback IdP sign-in</title></head>
<body><h1>Sign in to the loopback IdP</h1>
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label>Login <input type="text" name="login" autofocus required></label>
<button type="submit">Sign in</button>
</form></body></html>`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function unsigned(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part(header)}.${part(claims)}.`;
}

/** Starts the provider on an ephemeral loopback port. */
export async function startOidcIdp(options: OidcIdpOptions): Promise<OidcIdp> {
  const algorithm = options.algorithm ?? 'RS256';
  const providerKeys = await generateKeyPair(algorithm, { extractable: true });
  const kid = `idp-${randomBytes(4).toString('hex')}`;
  const privateJwk: JWK = { ...(await exportJWK(providerKeys.privateKey)), kid, alg: algorithm, use: 'sig' };
  const otherKeys = await generateKeyPair(algorithm);
  const clientId = `atrium-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(32).toString('base64url');
  const claimsOf = options.claimsOf ?? defaultClaims;

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: algorithm,
      },
    ],
    jwks: { keys: [privateJwk] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'given_name', 'family_name', 'groups', ...(options.extraClaims ?? [])],
    },
    conformIdTokenClaims: options.idTokenClaims === 'userinfo-only',
    cookies: { keys: [randomBytes(32).toString('hex')] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // Consent is not what these tests are about: every requested scope and claim is granted.
    loadExistingGrant: async (ctx: any) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope(ctx.oidc.params.scope ?? 'openid');
      grant.addOIDCClaims(['email', 'email_verified', 'name', 'given_name', 'family_name', 'groups']);
      if (options.extraClaims) grant.addOIDCClaims(options.extraClaims);
      await grant.save();
      return grant;
    },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => Object.assign({ sub }, claimsOf(sub)),
    }),
  });

  const idp: OidcIdp = {
    issuer,
    discoveryEndpoint: `${issuer}/.well-known/openid-configuration`,
    clientId,
    clientSecret,
    tamper: null,
    requests: [],
    tokenRequests: [],
    signIn: (authorizationUrl, login) => signIn(authorizationUrl, login),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  // The token endpoint's answer, after the real provider produced it: tampered when a test asks.
  provider.use(async (ctx: any, next: () => Promise<void>) => {
    await next();
    if (ctx.path !== '/token') return;
    idp.tokenRequests.push({ grantType: ctx.oidc?.params?.grant_type, status: ctx.status });
    const tamper = idp.tamper;
    if (!tamper || ctx.status !== 200 || typeof ctx.body?.id_token !== 'string') return;
    const claims: Record<string, unknown> = Object.assign({}, decodeJwt(ctx.body.id_token));
    for (const [name, value] of Object.entries(tamper.claims ?? {})) {
      if (value === undefined) delete claims[name];
      else claims[name] = value;
    }
    const header = decodeProtectedHeader(ctx.body.id_token);
    const signer = tamper.signer ?? 'provider';
    let token: string;
    if (signer === 'none') token = unsigned({ alg: 'none', typ: 'JWT' }, claims);
    else if (signer === 'hs256-secret') {
      token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: tamper.kid ?? header.kid })
        .sign(new TextEncoder().encode(clientSecret));
    } else {
      const key = signer === 'other' ? otherKeys.privateKey : providerKeys.privateKey;
      token = await new SignJWT(claims)
        .setProtectedHeader({ alg: algorithm, typ: 'JWT', kid: tamper.kid ?? header.kid ?? kid })
        .sign(key);
    }
    ctx.body = Object.assign({}, ctx.body, { id_token: token });
  });

  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    idp.requests.push(`${req.method} ${url.pathname}`);
    const page = /^\/interaction\/([\w-]+)$/.exec(url.pathname);
    const submit = /^\/interaction\/([\w-]+)\/login$/.exec(url.pathname);
    if (page && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(loginPage(page[1] as string));
      return;
    }
    if (submit && req.method === 'POST') {
      void (async () => {
        try {
          const form = await readForm(req);
          const login = form.get('login')?.trim();
          if (!login) {
            res.writeHead(400, { 'content-type': 'text/plain' }).end('login is required');
            return;
          }
          await provider.interactionFinished(
            req,
            res,
            { login: { accountId: login } },
            { mergeWithLastSubmission: false },
          );
        } catch (error) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(String((error as Error).message));
        }
      })();
      return;
    }
    callback(req, res);
  });

  /** A cookie jar as small as this flow needs: names and values, paths ignored. */
  async function signIn(authorizationUrl: string, login: string): Promise<URL> {
    const jar = new Map<string, string>();
    const remember = (response: Response) => {
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const at = (pair ?? '').indexOf('=');
        if (at > 0) jar.set((pair as string).slice(0, at).trim(), (pair as string).slice(at + 1).trim());
      }
    };
    const cookieHeader = () => [...jar].map(([n, v]) => `${n}=${v}`).join('; ');
    let next = new URL(authorizationUrl);
    for (let hop = 0; hop < 10; hop += 1) {
      if (!next.href.startsWith(issuer)) return next;
      let response: Response;
      const page = /^\/interaction\/([\w-]+)$/.exec(next.pathname);
      if (page) {
        response = await fetch(`${issuer}/interaction/${page[1]}/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ login }).toString(),
        });
      } else {
        response = await fetch(next, { redirect: 'manual', headers: { cookie: cookieHeader() } });
      }
      remember(response);
      const location = response.headers.get('location');
      if (!location)
        throw new Error(`the provider answered ${response.status} at ${next.pathname}: ${await response.text()}`);
      await response.arrayBuffer();
      next = new URL(location, next);
    }
    throw new Error('too many redirects at the provider');
  }

  return idp;
}
