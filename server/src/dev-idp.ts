// A SAML 2.0 identity provider on loopback (samlify), for local sign-in through an SSO connection
// and for the tests: a login page with a form, signed responses AND signed assertions (its own key
// and certificate, made at start), posted back to the service provider's ACS (HTTP-POST binding).
import { randomBytes, webcrypto } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import type { X509CertificateCreateSelfSignedParams } from '@peculiar/x509';
import { DOMParser } from '@xmldom/xmldom';
import * as samlify from 'samlify';

// The AuthnRequests this IdP reads are parsed below (the HTTP-Redirect binding); samlify's own
// schema check is for the messages it receives, which this IdP does not use.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const RSA = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
} as const;

/** An IdP signing key and its self-signed certificate. */
export interface SamlIdpKey {
  privateKeyPem: string;
  certificatePem: string;
  /** Base64 DER of the certificate (what metadata and KeyInfo carry). */
  certificateBase64: string;
}

function pem(label: string, der: Buffer): string {
  return `-----BEGIN ${label}-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)
    ?.join('\n')}\n-----END ${label}-----\n`;
}

/** A fresh RSA-2048 key and a self-signed certificate valid from `notBefore` to `notAfter`. */
export async function makeSamlIdpKey(
  name = 'Atrium dev IdP',
  notBefore = new Date(Date.now() - 60_000),
  notAfter = new Date(notBefore.getTime() + 365 * 86_400_000),
): Promise<SamlIdpKey> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  const keys = (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomBytes(16)
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: `CN=${name}`,
    notBefore,
    notAfter,
    keys: keys as unknown as X509CertificateCreateSelfSignedParams['keys'],
    signingAlgorithm: RSA,
  });
  const der = Buffer.from(certificate.rawData);
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    privateKeyPem: pem('PRIVATE KEY', pkcs8),
    certificatePem: pem('CERTIFICATE', der),
    certificateBase64: der.toString('base64'),
  };
}

const xmlEscape = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** What a login response says (times are the IdP clock's: pass them from the caller's clock). */
export interface SamlResponseFields {
  responseId?: string;
  assertionId?: string;
  issuer: string;
  /** The ACS URL the response is addressed to; omitted when undefined. */
  destination?: string | undefined;
  /** The AuthnRequest answered; omitted (IdP-initiated) when undefined. */
  inResponseTo?: string | undefined;
  nameId: string;
  nameIdFormat?: string;
  recipient: string;
  audience: string;
  issueInstant: Date;
  notBefore: Date;
  notOnOrAfter: Date;
  sessionIndex?: string;
  attributes?: Record<string, string | string[]>;
  /** Attribute NameFormat (`basic` for Google, `uri` for Entra-style claim URIs). */
  attributeNameFormat?: string;
}

/** A fresh SAML id (an NCName). */
export function samlId(): string {
  return `_${randomBytes(20).toString('hex')}`;
}

/** The XML of an unsigned samlp:Response holding one saml:Assertion. */
export function samlResponseXml(fields: SamlResponseFields): string {
  const iso = (date: Date) => date.toISOString();
  const inResponseTo = fields.inResponseTo === undefined ? '' : ` InResponseTo="${xmlEscape(fields.inResponseTo)}"`;
  const destination = fields.destination === undefined ? '' : ` Destination="${xmlEscape(fields.destination)}"`;
  const nameFormat = fields.attributeNameFormat ?? 'urn:oasis:names:tc:SAML:2.0:attrname-format:unspecified';
  const attributes = Object.entries(fields.attributes ?? {})
    .map(([name, value]) => {
      const values = (Array.isArray(value) ? value : [value])
        .map(
          (v) =>
            `<saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">${xmlEscape(v)}</saml:AttributeValue>`,
        )
        .join('');
      return `<saml:Attribute Name="${xmlEscape(name)}" NameFormat="${nameFormat}">${values}</saml:Attribute>`;
    })
    .join('');
  const attributeStatement = attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '';
  return [
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${fields.responseId ?? samlId()}" Version="2.0" IssueInstant="${iso(fields.issueInstant)}"${destination}${inResponseTo}>`,
    `<saml:Issuer>${xmlEscape(fields.issuer)}</saml:Issuer>`,
    '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>',
    `<saml:Assertion ID="${fields.assertionId ?? samlId()}" Version="2.0" IssueInstant="${iso(fields.issueInstant)}">`,
    `<saml:Issuer>${xmlEscape(fields.issuer)}</saml:Issuer>`,
    '<saml:Subject>',
    `<saml:NameID Format="${fields.nameIdFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'}">${xmlEscape(fields.nameId)}</saml:NameID>`,
    '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">',
    `<saml:SubjectConfirmationData NotOnOrAfter="${iso(fields.notOnOrAfter)}" Recipient="${xmlEscape(fields.recipient)}"${inResponseTo}/>`,
    '</saml:SubjectConfirmation>',
    '</saml:Subject>',
    `<saml:Conditions NotBefore="${iso(fields.notBefore)}" NotOnOrAfter="${iso(fields.notOnOrAfter)}">`,
    `<saml:AudienceRestriction><saml:Audience>${xmlEscape(fields.audience)}</saml:Audience></saml:AudienceRestriction>`,
    '</saml:Conditions>',
    `<saml:AuthnStatement AuthnInstant="${iso(fields.issueInstant)}" SessionIndex="${fields.sessionIndex ?? samlId()}">`,
    '<saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext>',
    '</saml:AuthnStatement>',
    attributeStatement,
    '</saml:Assertion>',
    '</samlp:Response>',
  ].join('');
}

const ASSERTION = "/*[local-name(.)='Response']/*[local-name(.)='Assertion']";

/** Signs the Response's Assertion (enveloped, after its Issuer) with samlify's XML-DSig. */
export function signAssertion(xml: string, key: SamlIdpKey): string {
  return samlify.SamlLib.constructSAMLSignature({
    rawSamlMessage: xml,
    referenceTagXPath: ASSERTION,
    privateKey: key.privateKeyPem,
    signingCert: key.certificateBase64,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    isBase64Output: false,
    signatureConfig: {
      prefix: 'ds',
      location: { reference: `${ASSERTION}/*[local-name(.)='Issuer']`, action: 'after' },
    },
  } as Parameters<typeof samlify.SamlLib.constructSAMLSignature>[0]);
}

/** Signs the whole Response (enveloped, after its Issuer) with samlify's XML-DSig. */
export function signResponse(xml: string, key: SamlIdpKey): string {
  return samlify.SamlLib.constructSAMLSignature({
    rawSamlMessage: xml,
    isMessageSigned: true,
    privateKey: key.privateKeyPem,
    signingCert: key.certificateBase64,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    isBase64Output: false,
    signatureConfig: {
      prefix: 'ds',
      location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: 'after' },
    },
  } as Parameters<typeof samlify.SamlLib.constructSAMLSignature>[0]);
}

/** An AuthnRequest as this IdP reads it from the HTTP-Redirect binding. */
export interface ReadAuthnRequest {
  id: string;
  issuer: string;
  acsUrl: string;
}

/** Reads a deflated, base64 AuthnRequest (HTTP-Redirect binding). */
export function readAuthnRequest(samlRequest: string): ReadAuthnRequest {
  const xml = inflateRawSync(Buffer.from(samlRequest, 'base64')).toString('utf8');
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const root = doc.documentElement;
  if (!root || root.localName !== 'AuthnRequest') throw new Error('not an AuthnRequest');
  const issuer = root.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]?.textContent ?? '';
  return {
    id: root.getAttribute('ID') ?? '',
    issuer: issuer.trim(),
    acsUrl: root.getAttribute('AssertionConsumerServiceURL') ?? '',
  };
}

/** A person the login form signs in (the form's fields). */
export interface DevIdpUser {
  email: string;
  firstName?: string;
  lastName?: string;
  groups?: string[];
}

export interface DevIdp {
  /** `http://127.0.0.1:<port>` */
  url: string;
  entityId: string;
  /** The HTTP-Redirect SingleSignOnService. */
  ssoUrl: string;
  metadataUrl: string;
  metadataXml: string;
  key: SamlIdpKey;
  /** Every AuthnRequest read, in order. */
  requests: ReadAuthnRequest[];
  /** The response (XML) of `user` to an SP, signed twice: samlify signs the assertion and the response. */
  loginResponse(sp: { entityId: string; acsUrl: string }, user: DevIdpUser, inResponseTo?: string): Promise<string>;
  close(): Promise<void>;
}

export interface DevIdpOptions {
  port?: number;
  host?: string;
  /** The IdP's clock (the times it puts in assertions); tests pass their scope's. */
  now?: () => Date;
  key?: SamlIdpKey;
  /** How long an assertion is valid (default 5 minutes). */
  validityMs?: number;
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 64 * 1024) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

/**
 * Starts the IdP: `GET /metadata` (its metadata), `GET /sso` (HTTP-Redirect AuthnRequest: the
 * login page), `POST /login` (the form: an auto-submitting HTTP-POST of the signed response to
 * the SP's ACS, RelayState kept), `GET /initiate?acs=&audience=` (IdP-initiated: the same page).
 */
export async function startDevIdp(options: DevIdpOptions = {}): Promise<DevIdp> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? (() => new Date());
  const key = options.key ?? (await makeSamlIdpKey('Atrium dev IdP', new Date(now().getTime() - 60_000)));
  const validityMs = options.validityMs ?? 5 * 60_000;
  const requests: ReadAuthnRequest[] = [];
  let base = '';
  let idp: samlify.IdentityProviderInstance | undefined;
  const entityId = () => `${base}/metadata`;

  const loginResponse: DevIdp['loginResponse'] = async (sp, user, inResponseTo) => {
    if (!idp) throw new Error('the IdP is not started');
    const serviceProvider = samlify.ServiceProvider({
      entityID: sp.entityId,
      assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: sp.acsUrl }],
      wantAssertionsSigned: true,
      wantMessageSigned: true,
    });
    const at = now();
    const attributes: Record<string, string | string[]> = { email: user.email };
    if (user.firstName) attributes.firstName = user.firstName;
    if (user.lastName) attributes.lastName = user.lastName;
    if (user.groups && user.groups.length > 0) attributes.groups = user.groups;
    const xml = samlResponseXml({
      issuer: entityId(),
      destination: sp.acsUrl,
      inResponseTo,
      nameId: user.email,
      recipient: sp.acsUrl,
      audience: sp.entityId,
      issueInstant: at,
      notBefore: at,
      notOnOrAfter: new Date(at.getTime() + validityMs),
      attributes,
    });
    const made = await idp.createLoginResponse(
      serviceProvider,
      { extract: { request: { id: inResponseTo ?? '' } } },
      'post',
      { email: user.email },
      { customTagReplacement: () => ({ id: samlId(), context: xml }) },
    );
    return Buffer.from(made.context, 'base64').toString('utf8');
  };

  const loginPage = (fields: Record<string, string>, error?: string) =>
    page(
      'Sign in - Atrium dev IdP',
      `<h1>Atrium dev IdP</h1>${error ? `<p role="alert">${xmlEscape(error)}</p>` : ''}<form method="post" action="/login">` +
        Object.entries(fields)
          .map(([name, value]) => `<input type="hidden" name="${name}" value="${xmlEscape(value)}">`)
          .join('') +
        '<label>E-mail <input name="email" type="email" autocomplete="username" required></label> ' +
        '<label>First name <input name="first_name"></label> <label>Last name <input name="last_name"></label> ' +
        '<label>Groups <input name="groups" placeholder="comma-separated"></label> ' +
        '<button type="submit">Sign in</button></form>',
    );

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    if (req.method === 'GET' && url.pathname === '/metadata') {
      return send(200, 'application/samlmetadata+xml', idp?.getMetadata() ?? '');
    }
    if (req.method === 'GET' && url.pathname === '/sso') {
      const samlRequest = url.searchParams.get('SAMLRequest');
      if (!samlRequest) return send(400, 'text/html', page('Error', '<p>SAMLRequest is missing.</p>'));
      let request: ReadAuthnRequest;
      try {
        request = readAuthnRequest(samlRequest);
      } catch {
        return send(400, 'text/html', page('Error', '<p>SAMLRequest is not an AuthnRequest.</p>'));
      }
      requests.push(request);
      return send(
        200,
        'text/html',
        loginPage({
          request_id: request.id,
          acs: request.acsUrl,
          audience: request.issuer,
          relay_state: url.searchParams.get('RelayState') ?? '',
        }),
      );
    }
    if (req.method === 'GET' && url.pathname === '/initiate') {
      const acs = url.searchParams.get('acs') ?? '';
      const audience = url.searchParams.get('audience') ?? '';
      return send(200, 'text/html', loginPage({ request_id: '', acs, audience, relay_state: '' }));
    }
    if (req.method === 'POST' && url.pathname === '/login') {
      const form = await readForm(req);
      const email = (form.get('email') ?? '').trim();
      const acs = form.get('acs') ?? '';
      if (!email || !/^https?:\/\//.test(acs)) {
        return send(400, 'text/html', page('Error', '<p>The e-mail and the ACS URL are required.</p>'));
      }
      const user: DevIdpUser = { email };
      const firstName = form.get('first_name')?.trim();
      if (firstName) user.firstName = firstName;
      const lastName = form.get('last_name')?.trim();
      if (lastName) user.lastName = lastName;
      const groups = (form.get('groups') ?? '')
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      if (groups.length > 0) user.groups = groups;
      const xml = await loginResponse(
        { entityId: form.get('audience') ?? '', acsUrl: acs },
        user,
        form.get('request_id') || undefined,
      );
      const relayState = form.get('relay_state') ?? '';
      return send(
        200,
        'text/html',
        page(
          'Signing in - Atrium dev IdP',
          `<form id="saml" method="post" action="${xmlEscape(acs)}">` +
            `<input type="hidden" name="SAMLResponse" value="${Buffer.from(xml).toString('base64')}">` +
            (relayState ? `<input type="hidden" name="RelayState" value="${xmlEscape(relayState)}">` : '') +
            '<button type="submit">Continue</button></form>' +
            '<script>document.getElementById("saml").submit()</script>',
        ),
      );
    }
    return send(404, 'text/plain', 'not found');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(error instanceof Error ? error.message : 'error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  base = `http://${host}:${port}`;
  idp = samlify.IdentityProvider({
    entityID: entityId(),
    privateKey: key.privateKeyPem,
    signingCert: key.certificatePem,
    singleSignOnService: [
      { Binding: samlify.Constants.namespace.binding.redirect, Location: `${base}/sso` },
      { Binding: samlify.Constants.namespace.binding.post, Location: `${base}/sso` },
    ],
    nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
    requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  });
  return {
    url: base,
    entityId: entityId(),
    ssoUrl: `${base}/sso`,
    metadataUrl: `${base}/metadata`,
    metadataXml: idp.getMetadata(),
    key,
    requests,
    loginResponse,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `npx atrium dev-idp --port 7000` (or `npm run dev-idp`): serves the IdP until stopped. */
export async function runDevIdp(argv: string[]): Promise<void> {
  let port = 7000;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port') port = Number(argv[++i]);
    else throw new Error(`unknown argument '${argv[i]}' (only --port PORT)`);
  }
  const idp = await startDevIdp({ port });
  process.stdout.write(
    `SAML IdP on ${idp.url}\nmetadata URL: ${idp.metadataUrl}\nentity id: ${idp.entityId}\nSSO URL: ${idp.ssoUrl}\n`,
  );
  const stop = () => void idp.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runDevIdp(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
