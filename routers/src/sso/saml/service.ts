// The SAML protocol module: the AuthnRequest (HTTP-Redirect), the verification of the IdP's
// response (node-saml: XML signatures, InResponseTo, audience, times) plus what node-saml leaves
// to its caller (Recipient, Destination, Issuer, the replay cache), and the attribute mapping.
// Protocol only: the SSO service (../service.ts) decides what a verified identity becomes.
import { createPrivateKey, randomBytes } from 'node:crypto';
import type { AttributeMapping, Db } from '@atrium/db';
import type { CacheProvider, SamlConfig } from '@node-saml/node-saml';
import type { DOMParser } from '@xmldom/xmldom';
import type { XPathSelect } from 'xpath';
import type { ConnectionRow } from '../../connections/store.ts';
import type { Deps } from '../../kernel/deps.ts';
import type { Scope } from '../../kernel/scope.ts';
import { lazy } from '../../lib/lazy.ts';
import { unseal } from '../../signing/material.ts';
import { type AnswerUse, replayedAnswer, SsoFailure, type SsoIdentity } from '../identity.ts';
import { samlAcsUrl, samlSpEntityId } from '../urls.ts';
import { DEFAULT_ATTRIBUTE_NAMES, spKeyContext } from './config.ts';
import { rememberAssertionId } from './store.ts';

export { configureSamlConnection, SamlConfigInput } from './config.ts';

/** The contract's default clock skew between this server and an IdP (seconds). */
export const DEFAULT_SSO_CLOCK_SKEW_SECONDS = 60;
/** The largest SAMLResponse accepted (base64 characters). */
const MAX_RESPONSE_LENGTH = 512 * 1024;

const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SAMLP_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';

/** The allowed clock skew in milliseconds (`ATRIUM_SSO_CLOCK_SKEW_SECONDS`, default 60 s). */
export function clockSkewMs(deps: Deps): number {
  return (deps.config.ssoClockSkewSeconds ?? DEFAULT_SSO_CLOCK_SKEW_SECONDS) * 1000;
}

/** What reads the XML of a response: xmldom's parser and xpath over SAML's namespaces. */
interface Xml {
  DOMParser: typeof DOMParser;
  select: XPathSelect;
}

/**
 * node-saml, xmldom and xpath, loaded with the first SAML sign-in or SP metadata document (a
 * process without SAML connections never holds them), and the `ScopedSaml` class built on them.
 */
const loadSaml = lazy(async () => {
  const [nodeSaml, xmldom, xpath] = await Promise.all([
    import('@node-saml/node-saml'),
    import('@xmldom/xmldom'),
    import('xpath'),
  ]);
  const xml: Xml = { DOMParser: xmldom.DOMParser, select: xpath.useNamespaces({ saml: SAML_NS, samlp: SAMLP_NS }) };

  /**
   * node-saml reads the wall clock for its time checks; this one reads the scope's clock instead,
   * so that the times of an assertion are judged at the same instant as everything else of the
   * request (and tests can replay a recorded assertion at a fixed clock).
   */
  class ScopedSaml extends nodeSaml.SAML {
    /** What the signature covers, parsed once (set when node-saml accepts a signature). */
    signed: { root: Element; assertion: Element } | undefined;

    constructor(
      options: SamlConfig,
      private readonly clock: () => Date,
    ) {
      super(options);
    }

    /**
     * node-saml parses the verified XML (the signed Response, or the signed Assertion) to take its
     * one Assertion out as a string; this parses it once and keeps the elements, so the checks
     * below read the signed DOM itself instead of parsing the response and the assertion again.
     * Anything else (no assertion, several, an encrypted one) goes to node-saml's own handling.
     */
    protected override async getSignedAssertion(signedXml: string): Promise<string | null> {
      const root = parseXml(xml, signedXml, 'signed content').documentElement;
      const assertion = root.localName === 'Response' ? onlyChild(root, 'Assertion') : root;
      if (assertion?.localName !== 'Assertion') return super.getSignedAssertion(signedXml);
      this.signed = { root, assertion };
      return assertion.toString();
    }

    protected override checkTimestampsValidityError(
      _wallClockMs: number,
      notBefore: string,
      notOnOrAfter: string,
      maxTimeLimitMs?: number,
    ): Error | null {
      return super.checkTimestampsValidityError(this.clock().getTime(), notBefore, notOnOrAfter, maxTimeLimitMs);
    }
  }

  return {
    ScopedSaml,
    ValidateInResponseTo: nodeSaml.ValidateInResponseTo,
    generateServiceProviderMetadata: nodeSaml.generateServiceProviderMetadata,
    xml,
  };
});

/** The SP private key of a connection as PEM (only for signing AuthnRequests). */
function spPrivateKeyPem(deps: Deps, connection: ConnectionRow): string {
  if (!connection.samlSpPrivateKeySealed) throw new Error(`Connection ${connection.id} has no SP key.`);
  const der = unseal(deps.tokens.masterKey, spKeyContext(connection.id), connection.samlSpPrivateKeySealed, 'SP key');
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({
    format: 'pem',
    type: 'pkcs8',
  }) as string;
}

/** An AuthnRequest id: an NCName (a letter first), unguessable. */
function newRequestId(): string {
  return `_${randomBytes(20).toString('hex')}`;
}

function requireConfigured(connection: ConnectionRow): { ssoUrl: string; certificates: string[] } {
  const certificates = connection.samlIdpCertificates.map((c) => c.pem);
  if (!connection.samlIdpSsoUrl || certificates.length === 0) {
    throw new SsoFailure('connection_not_configured', 'The SAML connection has no IdP SSO URL or certificate yet.');
  }
  return { ssoUrl: connection.samlIdpSsoUrl, certificates };
}

/**
 * The HTTP-Redirect binding URL of a fresh AuthnRequest (RelayState = the authorization id),
 * signed with the connection's SP key when it signs requests, and the request id that the
 * response's `InResponseTo` must carry.
 */
export async function startSaml(
  scope: Scope,
  connection: ConnectionRow,
  authorizationId: string,
  loginHint?: string,
): Promise<{ url: string; samlRequestId: string }> {
  const { ssoUrl, certificates } = requireConfigured(connection);
  const { ScopedSaml, ValidateInResponseTo } = await loadSaml();
  const samlRequestId = newRequestId();
  const options: SamlConfig = {
    entryPoint: ssoUrl,
    issuer: samlSpEntityId(scope.deps, connection.id),
    callbackUrl: samlAcsUrl(scope.deps, connection.id),
    idpCert: certificates,
    generateUniqueId: () => samlRequestId,
    validateInResponseTo: ValidateInResponseTo.never,
    identifierFormat: null,
    disableRequestedAuthnContext: true,
  };
  if (connection.samlSignRequests) {
    options.privateKey = spPrivateKeyPem(scope.deps, connection);
    options.signatureAlgorithm = 'sha256';
  }
  if (loginHint) options.additionalAuthorizeParams = { login_hint: loginHint };
  const saml = new ScopedSaml(options, scope.now);
  const url = await saml.getAuthorizeUrlAsync(authorizationId, undefined, {});
  return { url, samlRequestId };
}

/**
 * The one request id a response may answer: node-saml asks its cache provider whether an
 * `InResponseTo` is a request it made. The request's lifetime is the authorization's (10 min,
 * checked by the SSO service against the scope's clock), so the entry carries no age of its own.
 */
function expectedRequest(samlRequestId: string | null, issuedAt: string): CacheProvider {
  return {
    saveAsync: async () => null,
    getAsync: async (key: string) => (samlRequestId !== null && key === samlRequestId ? issuedAt : null),
    removeAsync: async () => null,
  };
}

/** node-saml's refusals, as stable reason codes (its messages are for logs, not for callers). */
function failureOf(error: unknown): SsoFailure {
  if (error instanceof SsoFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  const reason = (() => {
    if (/InResponseTo/i.test(message)) return 'in_response_to_mismatch';
    if (/not yet valid/i.test(message)) return 'not_yet_valid';
    if (/expired/i.test(message)) return 'expired';
    if (/audience/i.test(message)) return 'audience_mismatch';
    if (/subject confirmation/i.test(message)) return 'expired';
    if (/signature|signed|Cannot obtain assertion|Missing SAML assertion/i.test(message)) return 'invalid_signature';
    if (/SAML provider returned/i.test(message)) return 'idp_error';
    return 'invalid_response';
  })();
  return new SsoFailure(reason, message.slice(0, 300));
}

/** Parses XML with no DOCTYPE and no errors; `what` names it in the refusal. */
function parseXml({ DOMParser }: Xml, source: string, what: string): Document {
  const errors: string[] = [];
  let doc: Document;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') errors.push(message);
      },
    }).parseFromString(source, 'text/xml') as unknown as Document;
  } catch {
    throw new SsoFailure('invalid_response', `The ${what} is not XML.`);
  }
  if (errors.length > 0 || !doc.documentElement) throw new SsoFailure('invalid_response', `The ${what} is not XML.`);
  if (doc.doctype) throw new SsoFailure('invalid_response', `The ${what} carries a DOCTYPE.`);
  return doc;
}

/** The one child element of `parent` with this local name (any namespace, as node-saml selects it). */
function onlyChild(parent: Element, localName: string): Element | undefined {
  let found: Element | undefined;
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType !== 1 || (node as Element).localName !== localName) continue;
    if (found) return undefined;
    found = node as Element;
  }
  return found;
}

/** The root of the posted response, refused unless it is a samlp:Response. */
function responseRoot(xml: Xml, responseXml: string): Element {
  const root = parseXml(xml, responseXml, 'SAMLResponse').documentElement;
  if (root.localName !== 'Response' || root.namespaceURI !== SAMLP_NS) {
    throw new SsoFailure('invalid_response', 'The SAMLResponse is not a samlp:Response.');
  }
  return root;
}

function text(node: Node | undefined): string | undefined {
  const value = node?.textContent?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * `verifySamlResponse`, then the replay check on its own: remembers the assertion id (also when
 * the mapping refuses it) and refuses one this connection has accepted before. The ACS does not
 * call this: the SSO service remembers the id in the sign-in's transaction (`SsoIdentity.use`).
 */
export async function consumeSamlResponse(
  scope: Scope,
  connection: ConnectionRow,
  form: { SAMLResponse: string; RelayState?: string },
  expected: { samlRequestId: string } | null,
): Promise<SsoIdentity> {
  let identity: SsoIdentity | undefined;
  let refusal: unknown;
  try {
    identity = await verifySamlResponse(scope, connection, form, expected);
  } catch (error) {
    refusal = error;
  }
  const use = identity?.use ?? (refusal instanceof SsoFailure ? refusal.use : undefined);
  if (use && !(await rememberSamlAssertion(scope.db, scope, connection.id, use))) throw replayedAnswer();
  if (!identity) throw refusal;
  // Remembered here already: without its use, a sign-in of this identity does not remember it again.
  const { use: _remembered, ...remembered } = identity;
  return remembered;
}

/**
 * Remembers an accepted assertion id of the connection on `db` (a transaction's, for the ACS);
 * false when the connection has accepted it before (a replay).
 */
export function rememberSamlAssertion(db: Db, scope: Scope, connectionId: string, use: AnswerUse): Promise<boolean> {
  return rememberAssertionId(
    db,
    { environmentId: scope.env.id, connectionId, assertionId: use.assertionId, expiresAt: use.expiresAt },
    scope.now(),
  );
}

/**
 * Verifies the IdP's POSTed response for this connection and maps the person it names. With
 * `expected`, the response must answer that AuthnRequest; without (IdP-initiated), the
 * connection must allow IdP-initiated sign-in and the response must answer no request.
 * Accepted: a signed Response, or a signed Assertion (in a signed or unsigned Response), by one
 * of the connection's IdP certificates. Throws `SsoFailure` with a stable reason. Writes nothing:
 * the assertion's id and lifetime come back as `use` (on the refusal too when the mapping refuses
 * a verified assertion), for the caller to remember once.
 */
export async function verifySamlResponse(
  scope: Scope,
  connection: ConnectionRow,
  form: { SAMLResponse: string; RelayState?: string },
  expected: { samlRequestId: string } | null,
): Promise<SsoIdentity> {
  if (expected === null && !connection.samlIdpInitiatedEnabled) {
    throw new SsoFailure('idp_initiated_disabled', 'IdP-initiated sign-in is not enabled for this connection.');
  }
  const { certificates } = requireConfigured(connection);
  if (typeof form.SAMLResponse !== 'string' || form.SAMLResponse.length === 0) {
    throw new SsoFailure('invalid_response', 'The SAMLResponse is missing.');
  }
  if (form.SAMLResponse.length > MAX_RESPONSE_LENGTH) {
    throw new SsoFailure('invalid_response', 'The SAMLResponse is too large.');
  }
  const acsUrl = samlAcsUrl(scope.deps, connection.id);
  const responseXml = Buffer.from(form.SAMLResponse, 'base64').toString('utf8');
  // node-saml's parser accepts a DOCTYPE: refused here before it parses (anywhere in the text, so
  // one inside a comment is refused too). The rest of the document's checks run on node-saml's parse.
  if (/<!DOCTYPE/i.test(responseXml)) throw new SsoFailure('invalid_response', 'The SAMLResponse carries a DOCTYPE.');
  const { ScopedSaml, ValidateInResponseTo, xml } = await loadSaml();
  const { select } = xml;
  const skewMs = clockSkewMs(scope.deps);
  const saml = new ScopedSaml(
    {
      issuer: samlSpEntityId(scope.deps, connection.id),
      callbackUrl: acsUrl,
      audience: samlSpEntityId(scope.deps, connection.id),
      idpCert: certificates,
      // Either signature is enough: a signed Response covers its Assertion, a signed Assertion
      // covers itself; node-saml refuses a response where neither verifies.
      wantAssertionsSigned: false,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: skewMs,
      validateInResponseTo: expected ? ValidateInResponseTo.always : ValidateInResponseTo.ifPresent,
      cacheProvider: expectedRequest(expected?.samlRequestId ?? null, scope.now().toISOString()),
      requestIdExpirationPeriodMs: Number.MAX_SAFE_INTEGER,
    },
    scope.now,
  );
  try {
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: form.SAMLResponse });
    if (!profile) throw new SsoFailure('invalid_response', 'The SAMLResponse carries no assertion.');
  } catch (error) {
    // What is not XML or not a samlp:Response is refused as such, before node-saml's own reason.
    responseRoot(xml, responseXml);
    throw failureOf(error);
  }
  if (!saml.signed) throw new SsoFailure('invalid_signature', 'The signed content holds no assertion.');
  // The assertion exactly as its signature (or the response's) covers it: every check below
  // reads it, never the document as posted.
  const { assertion } = saml.signed;
  if (assertion.localName !== 'Assertion' || assertion.namespaceURI !== SAML_NS) {
    throw new SsoFailure('invalid_signature', 'The signed content is not an assertion.');
  }
  // A signed Response is the posted root itself, verified; an unsigned one is parsed from the post.
  const root = saml.signed.root === assertion ? responseRoot(xml, responseXml) : saml.signed.root;
  if (root.localName !== 'Response' || root.namespaceURI !== SAMLP_NS) {
    throw new SsoFailure('invalid_response', 'The SAMLResponse is not a samlp:Response.');
  }

  const destination = root.getAttribute('Destination');
  if (destination && destination !== acsUrl) {
    throw new SsoFailure('destination_mismatch', 'The response is addressed to another ACS URL.');
  }
  const issuer = text(select('saml:Issuer', assertion, true) as Node | undefined);
  if (connection.samlIdpEntityId && issuer !== connection.samlIdpEntityId) {
    throw new SsoFailure('issuer_mismatch', 'The assertion was issued by another IdP entity.');
  }
  const confirmation = select(
    "saml:Subject/saml:SubjectConfirmation[@Method='urn:oasis:names:tc:SAML:2.0:cm:bearer']/saml:SubjectConfirmationData",
    assertion,
  ) as Element[];
  if (confirmation.length === 0) {
    throw new SsoFailure('invalid_response', 'The assertion has no bearer SubjectConfirmation.');
  }
  if (!confirmation.some((data) => data.getAttribute('Recipient') === acsUrl)) {
    throw new SsoFailure('recipient_mismatch', 'The assertion is meant for another recipient.');
  }
  if (expected) {
    const answered = confirmation.map((data) => data.getAttribute('InResponseTo')).filter((v) => v);
    if (answered.some((value) => value !== expected.samlRequestId)) {
      throw new SsoFailure('in_response_to_mismatch', 'The assertion answers another request.');
    }
  } else if (confirmation.some((data) => data.getAttribute('InResponseTo'))) {
    throw new SsoFailure('in_response_to_mismatch', 'An IdP-initiated assertion cannot answer a request.');
  }

  const assertionId = assertion.getAttribute('ID');
  if (!assertionId) throw new SsoFailure('invalid_response', 'The assertion has no ID.');
  const now = scope.now();
  const limits = [
    ...confirmation.map((data) => data.getAttribute('NotOnOrAfter')),
    (select('string(saml:Conditions/@NotOnOrAfter)', assertion) as string) || null,
  ]
    .filter((value): value is string => Boolean(value))
    .map((value) => Date.parse(value))
    .filter((value) => Number.isFinite(value));
  // Without a NotOnOrAfter the assertion would never expire: keep its id for a day past the skew.
  const until = limits.length > 0 ? Math.max(...limits) : now.getTime() + 86_400_000;
  const use: AnswerUse = { assertionId, expiresAt: new Date(until + skewMs) };
  try {
    return { ...mapIdentity(select, assertion, connection.attributeMapping), use };
  } catch (error) {
    if (error instanceof SsoFailure) error.use = use;
    throw error;
  }
}

/** Every attribute of the assertion: a single value as a string, several as an array. */
function attributesOf(select: XPathSelect, assertion: Element): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const attribute of select('saml:AttributeStatement/saml:Attribute', assertion) as Element[]) {
    const name = attribute.getAttribute('Name');
    if (!name) continue;
    const values = (select('saml:AttributeValue', attribute) as Node[]).map((node) => node.textContent ?? '');
    const previous = result[name];
    const all = [...(previous === undefined ? [] : Array.isArray(previous) ? previous : [previous]), ...values];
    result[name] = all.length === 1 ? (all[0] as string) : all;
  }
  return result;
}

function first(value: string | string[] | undefined): string | undefined {
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined || one.trim() === '' ? undefined : one.trim();
}

function pick(
  attributes: Record<string, string | string[]>,
  named: string | undefined,
  defaults: string[],
): string | string[] | undefined {
  if (named !== undefined) return attributes[named];
  for (const name of defaults) if (attributes[name] !== undefined) return attributes[name];
  return undefined;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Maps a verified assertion through the connection's attribute mapping (defaults where unset). */
export function mapIdentity(select: XPathSelect, assertion: Element, mapping: AttributeMapping): SsoIdentity {
  const attributes = attributesOf(select, assertion);
  // textContent joins the text around any comment (`user@evil.com<!---->.example.com`): the
  // whole value, as the signature covered it, never the part before the comment.
  const nameId = (select('saml:Subject/saml:NameID', assertion, true) as Node | undefined)?.textContent?.trim();
  const idpId = mapping.idp_id ? first(attributes[mapping.idp_id]) : nameId;
  if (!idpId) throw new SsoFailure('missing_attribute', 'The assertion names no subject (NameID).');
  const email =
    first(pick(attributes, mapping.email, DEFAULT_ATTRIBUTE_NAMES.email)) ??
    (mapping.email === undefined && nameId && EMAIL.test(nameId) ? nameId : undefined);
  if (!email || !EMAIL.test(email)) {
    throw new SsoFailure('missing_attribute', 'The assertion carries no e-mail address.');
  }
  const identity: SsoIdentity = {
    idpId,
    email: email.toLowerCase(),
    customAttributes: {},
    rawAttributes: { ...attributes },
  };
  const firstName = first(pick(attributes, mapping.first_name, DEFAULT_ATTRIBUTE_NAMES.first_name));
  if (firstName !== undefined) identity.firstName = firstName;
  const lastName = first(pick(attributes, mapping.last_name, DEFAULT_ATTRIBUTE_NAMES.last_name));
  if (lastName !== undefined) identity.lastName = lastName;
  const name = first(pick(attributes, mapping.name, DEFAULT_ATTRIBUTE_NAMES.name));
  if (name !== undefined) identity.name = name;
  else if (firstName !== undefined || lastName !== undefined) {
    identity.name = [firstName, lastName].filter((part) => part !== undefined).join(' ');
  }
  const groups = pick(attributes, mapping.groups, DEFAULT_ATTRIBUTE_NAMES.groups);
  if (groups !== undefined) identity.groups = Array.isArray(groups) ? groups : [groups];
  for (const [field, attribute] of Object.entries(mapping.custom ?? {})) {
    const value = attributes[attribute];
    if (value !== undefined) identity.customAttributes[field] = value;
  }
  return identity;
}

/**
 * The SP metadata document of a connection (node-saml): its entity id, its ACS (HTTP-POST), and
 * its signing certificate once the connection is configured.
 */
export async function samlMetadataXml(deps: Deps, connection: ConnectionRow): Promise<string> {
  const { generateServiceProviderMetadata } = await loadSaml();
  const params: Parameters<typeof generateServiceProviderMetadata>[0] = {
    issuer: samlSpEntityId(deps, connection.id),
    callbackUrl: samlAcsUrl(deps, connection.id),
    identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    wantAssertionsSigned: true,
  };
  // node-saml publishes the signing certificate (and AuthnRequestsSigned) only for an SP that signs.
  if (connection.samlSignRequests && connection.samlSpCertificate) {
    params.privateKey = spPrivateKeyPem(deps, connection);
    params.publicCerts = connection.samlSpCertificate;
  }
  return generateServiceProviderMetadata(params);
}
