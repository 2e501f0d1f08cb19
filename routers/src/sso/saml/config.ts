// A SAML connection's configuration: the IdP (metadata XML or URL, or fields by hand), its
// signing certificates with their validity, the SP key pair made once, and the attribute mapping.
import { createHash } from 'node:crypto';
import type { AttributeMapping, SamlCertificate } from '@atrium/db';
import type { DOMParser } from '@xmldom/xmldom';
import { z } from 'zod';
import { orNotFound } from '../../common/store.ts';
import type { Connection } from '../../connections/schemas.ts';
import { toConnection } from '../../connections/service.ts';
import {
  type ConnectionRow,
  lockConnection,
  type SamlConnectionColumns,
  updateConfiguration,
} from '../../connections/store.ts';
import { recordEvent } from '../../events/record.ts';
import { type FieldError, invalid } from '../../kernel/errors.ts';
import type { Scope } from '../../kernel/scope.ts';
import { lazy } from '../../lib/lazy.ts';
import { generateKeyMaterial, loadX509, seal } from '../../signing/material.ts';
import { checkWebhookUrl } from '../../webhooks/url-policy.ts';

const MAX_METADATA_BYTES = 1_000_000;
const METADATA_TIMEOUT_MS = 10_000;
/** An IdP certificate that expires within this many days needs renewing (the expiry pass warns). */
export const CERTIFICATE_RENEWAL_WINDOW_DAYS = 30;

const AttributeMappingInput = z
  .object({
    idp_id: z.string().min(1).max(500).optional(),
    email: z.string().min(1).max(500).optional(),
    first_name: z.string().min(1).max(500).optional(),
    last_name: z.string().min(1).max(500).optional(),
    name: z.string().min(1).max(500).optional(),
    groups: z.string().min(1).max(500).optional(),
    custom: z.record(z.string().min(1).max(200), z.string().min(1).max(500)).optional(),
  })
  .strict();

/** How a SAML connection is configured (the CLI, the console, the admin portal all pass this). */
export const SamlConfigInput = z
  .object({
    idp_metadata_xml: z.string().min(1).max(MAX_METADATA_BYTES).optional(),
    idp_metadata_url: z.string().min(1).max(2_000).optional(),
    idp_entity_id: z.string().min(1).max(1_000).optional(),
    idp_sso_url: z.string().min(1).max(2_000).optional(),
    /** PEM (or bare base64 DER) certificates, added to those of the metadata. */
    idp_certificates: z.array(z.string().min(1).max(20_000)).max(10).optional(),
    sign_requests: z.boolean().optional(),
    idp_initiated_enabled: z.boolean().optional(),
    attribute_mapping: AttributeMappingInput.optional(),
  })
  .strict();
export type SamlConfigInput = z.input<typeof SamlConfigInput>;

/** What an IdP metadata document says about signing in. */
export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** Base64 DER of each signing certificate. */
  certificates: string[];
}

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
/** xmldom and xpath over the metadata's namespaces, loaded with the first metadata document read. */
const loadXml = lazy(async () => {
  const [xmldom, xpath] = await Promise.all([import('@xmldom/xmldom'), import('xpath')]);
  return { DOMParser: xmldom.DOMParser, select: xpath.useNamespaces({ md: MD, ds: DS }) };
});

const fieldError = (field: string, message: string): FieldError => ({ field, code: 'invalid', message });

/**
 * Reads an IdP metadata document (an EntityDescriptor, or the first IdP one of an
 * EntitiesDescriptor): its entity id, the HTTP-Redirect (else HTTP-POST) SSO URL and every
 * signing certificate. Throws a 422 naming `idp_metadata` when the document is not that.
 */
export async function parseIdpMetadata(xml: string, field = 'idp_metadata_xml'): Promise<IdpMetadata> {
  const { DOMParser, select } = await loadXml();
  const errors: string[] = [];
  let doc: ReturnType<DOMParser['parseFromString']>;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') errors.push(message);
      },
    }).parseFromString(xml, 'text/xml');
  } catch {
    throw invalid([fieldError(field, 'The IdP metadata is not well-formed XML.')]);
  }
  if (errors.length > 0 || !doc.documentElement) {
    throw invalid([fieldError(field, 'The IdP metadata is not well-formed XML.')]);
  }
  if (doc.doctype) throw invalid([fieldError(field, 'The IdP metadata must not carry a DOCTYPE.')]);
  const entity = select('(//md:EntityDescriptor[md:IDPSSODescriptor])[1]', doc as unknown as Node, true) as
    | Element
    | undefined;
  if (!entity) throw invalid([fieldError(field, 'The IdP metadata has no EntityDescriptor with an IDPSSODescriptor.')]);
  const entityId = entity.getAttribute('entityID') ?? '';
  const location = (binding: string) =>
    select(`string(md:IDPSSODescriptor/md:SingleSignOnService[@Binding='${binding}'][1]/@Location)`, entity) as string;
  const ssoUrl = location(REDIRECT) || location(POST);
  const certificates = (
    select(
      "md:IDPSSODescriptor/md:KeyDescriptor[not(@use) or @use='signing']/ds:KeyInfo/ds:X509Data/ds:X509Certificate",
      entity,
    ) as Node[]
  )
    .map((node) => (node.textContent ?? '').replace(/\s+/g, ''))
    .filter((text) => text.length > 0);
  const missing: FieldError[] = [];
  if (!entityId) missing.push(fieldError(field, 'The IdP metadata has no entityID.'));
  if (!ssoUrl)
    missing.push(fieldError(field, 'The IdP metadata has no HTTP-Redirect or HTTP-POST SingleSignOnService.'));
  if (certificates.length === 0) missing.push(fieldError(field, 'The IdP metadata has no signing certificate.'));
  if (missing.length > 0) throw invalid(missing);
  return { entityId, ssoUrl, certificates: [...new Set(certificates)] };
}

/** Base64 DER of a PEM certificate (or of bare base64), or undefined when it is neither. */
function derOf(text: string): string | undefined {
  const body = text.replace(/-----BEGIN CERTIFICATE-----|-----END CERTIFICATE-----/g, '').replace(/\s+/g, '');
  return /^[A-Za-z0-9+/]+={0,2}$/.test(body) ? body : undefined;
}

/** A PEM certificate of base64 DER, 64 characters a line. */
export function pemOf(der: string): string {
  return `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;
}

/** Reads one certificate (PEM or base64 DER) with @peculiar/x509: its PEM, SHA-256 and validity. */
export async function describeCertificate(text: string, field = 'idp_certificates'): Promise<SamlCertificate> {
  const der = derOf(text);
  const { X509Certificate } = await loadX509();
  let certificate: InstanceType<typeof X509Certificate>;
  try {
    if (!der) throw new Error('not base64');
    certificate = new X509Certificate(Buffer.from(der, 'base64'));
  } catch {
    throw invalid([fieldError(field, 'A certificate is not a PEM or base64 DER X.509 certificate.')]);
  }
  const raw = Buffer.from(certificate.rawData);
  return {
    pem: pemOf(raw.toString('base64')),
    fingerprint_sha256: createHash('sha256').update(raw).digest('hex'),
    not_before: certificate.notBefore.toISOString(),
    not_after: certificate.notAfter.toISOString(),
  };
}

/** Fetches a metadata URL under the webhook address rules (no private address unless allowed). */
async function fetchMetadata(scope: Scope, raw: string): Promise<string> {
  const field = 'idp_metadata_url';
  const check = await checkWebhookUrl(raw, scope.deps.config.webhooksAllowPrivate === true);
  if (!check.ok) throw invalid([fieldError(field, check.message.replace('endpoint_url', field))]);
  let response: Response;
  try {
    response = await fetch(check.url, {
      redirect: 'error',
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
      headers: { Accept: 'application/samlmetadata+xml, application/xml, text/xml' },
    });
  } catch {
    throw invalid([fieldError(field, 'The IdP metadata URL could not be fetched.')]);
  }
  if (!response.ok) {
    throw invalid([fieldError(field, `The IdP metadata URL answered HTTP ${response.status}.`)]);
  }
  const body = await response.arrayBuffer();
  if (body.byteLength > MAX_METADATA_BYTES) {
    throw invalid([fieldError(field, 'The IdP metadata is larger than 1 MB.')]);
  }
  return Buffer.from(body).toString('utf8');
}

/** True for connection types the SAML module serves (`GenericSAML`, `OktaSAML`, ...). */
export function isSamlType(connectionType: string): boolean {
  return /SAML$/.test(connectionType);
}

function httpsOrHttpUrl(raw: string, field: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol === 'https:' || url.protocol === 'http:') return url.toString();
  } catch {
    // fall through
  }
  throw invalid([fieldError(field, `${field} must be an absolute http(s) URL.`)]);
}

/** Whether a certificate expires within the renewal window at `now`. */
export function expiresSoon(certificate: SamlCertificate, now: Date): boolean {
  return Date.parse(certificate.not_after) - now.getTime() <= CERTIFICATE_RENEWAL_WINDOW_DAYS * 86_400_000;
}

/**
 * Configures a SAML connection: parses the IdP metadata (given, or fetched from its URL under
 * the webhook address rules), takes the fields given by hand over it, reads every certificate,
 * makes the SP key pair and its self-signed certificate once (the private key sealed under the
 * master key), and records `connection.updated` (plus `connection.saml_certificate_renewed`
 * when a new certificate arrives while a previous one was expiring).
 */
export async function configureSamlConnection(
  scope: Scope,
  connectionId: string,
  rawInput: SamlConfigInput,
): Promise<Connection> {
  const parsed = SamlConfigInput.safeParse(rawInput);
  if (!parsed.success) {
    throw invalid(
      parsed.error.issues.map((issue) => ({
        field: issue.path.join('.') || 'body',
        code: 'invalid',
        message: issue.message,
      })),
    );
  }
  const input = parsed.data;
  if (input.idp_metadata_xml !== undefined && input.idp_metadata_url !== undefined) {
    throw invalid([fieldError('idp_metadata_url', 'Give idp_metadata_xml or idp_metadata_url, not both.')]);
  }
  let metadata: IdpMetadata | undefined;
  if (input.idp_metadata_xml !== undefined) metadata = await parseIdpMetadata(input.idp_metadata_xml);
  else if (input.idp_metadata_url !== undefined) {
    metadata = await parseIdpMetadata(await fetchMetadata(scope, input.idp_metadata_url), 'idp_metadata_url');
  }
  const given = [...(metadata?.certificates ?? []), ...(input.idp_certificates ?? [])];
  const described: SamlCertificate[] = [];
  for (const text of given) {
    const certificate = await describeCertificate(text);
    if (!described.some((c) => c.fingerprint_sha256 === certificate.fingerprint_sha256)) described.push(certificate);
  }
  const ssoUrl = input.idp_sso_url ?? metadata?.ssoUrl;

  return scope.db.transaction(async (tx) => {
    const current = await lockConnection(tx, scope.env.id, connectionId);
    if (!isSamlType(current.connectionType)) {
      throw invalid([
        fieldError(
          'connection_type',
          `Connection ${connectionId} is ${current.connectionType}, not a SAML connection.`,
        ),
      ]);
    }
    const now = scope.now();
    // A certificate kept across a re-configuration keeps the mark of its renewal warning.
    const certificates =
      described.length > 0
        ? described.map((certificate) => {
            const before = current.samlIdpCertificates.find(
              (c) => c.fingerprint_sha256 === certificate.fingerprint_sha256,
            );
            if (before?.renewal_required_at) certificate.renewal_required_at = before.renewal_required_at;
            return certificate;
          })
        : current.samlIdpCertificates;
    const values: SamlConnectionColumns = {
      samlIdpEntityId: input.idp_entity_id ?? metadata?.entityId ?? current.samlIdpEntityId,
      samlIdpSsoUrl: ssoUrl === undefined ? current.samlIdpSsoUrl : httpsOrHttpUrl(ssoUrl, 'idp_sso_url'),
      samlIdpMetadataUrl: input.idp_metadata_url ?? (metadata ? null : current.samlIdpMetadataUrl),
      samlIdpCertificates: certificates,
      samlSignRequests: input.sign_requests ?? current.samlSignRequests,
      samlIdpInitiatedEnabled: input.idp_initiated_enabled ?? current.samlIdpInitiatedEnabled,
      attributeMapping: (input.attribute_mapping as AttributeMapping | undefined) ?? current.attributeMapping,
      samlSpPrivateKeySealed: current.samlSpPrivateKeySealed,
      samlSpCertificate: current.samlSpCertificate,
    };
    if (!values.samlSpPrivateKeySealed || !values.samlSpCertificate) {
      const material = await generateKeyMaterial(`atrium-saml-sp-${connectionId}`, now);
      values.samlSpPrivateKeySealed = seal(
        scope.deps.tokens.masterKey,
        spKeyContext(connectionId),
        material.privateKeyDer,
      );
      values.samlSpCertificate = pemOf(material.certificate);
    }
    const row = orNotFound(
      await updateConfiguration(tx, scope.env.id, connectionId, values, now),
      'connection',
      connectionId,
    );
    const connection = toConnection(row);
    await recordEvent(tx, scope, 'connection.updated', connection);
    const renewed = renewedCertificates(current.samlIdpCertificates, certificates, now);
    for (const certificate of renewed) {
      await recordEvent(tx, scope, 'connection.saml_certificate_renewed', {
        connection: { id: row.id, organization_id: row.organizationId },
        certificate: { certificate_type: 'ResponseSigning', expiry_date: certificate.not_after },
        renewed_at: now.toISOString(),
      });
    }
    return connection;
  });
}

/**
 * The certificates a re-configuration added while one of the previous ones was expiring (within
 * the renewal window, or expired): each is a renewal.
 */
function renewedCertificates(before: SamlCertificate[], after: SamlCertificate[], now: Date): SamlCertificate[] {
  if (!before.some((c) => expiresSoon(c, now))) return [];
  const known = new Set(before.map((c) => c.fingerprint_sha256));
  return after.filter((c) => !known.has(c.fingerprint_sha256) && !expiresSoon(c, now));
}

/** What the SP private key is sealed to: its connection (a sealed key cannot move to another row). */
export function spKeyContext(connectionId: string): string {
  return `saml-sp:${connectionId}`;
}

/**
 * The attribute names tried for each profile field when the connection's mapping names none:
 * plain names, then Okta's and Google's usual ones, Entra ID's claim URIs, then the OIDs.
 */
export const DEFAULT_ATTRIBUTE_NAMES: Record<'email' | 'first_name' | 'last_name' | 'name' | 'groups', string[]> = {
  email: [
    'email',
    'Email',
    'emailAddress',
    'mail',
    'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
    'urn:oid:0.9.2342.19200300.100.1.3',
    'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  ],
  first_name: [
    'firstName',
    'first_name',
    'FirstName',
    'givenName',
    'given_name',
    'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
    'urn:oid:2.5.4.42',
  ],
  last_name: [
    'lastName',
    'last_name',
    'LastName',
    'surname',
    'sn',
    'family_name',
    'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
    'urn:oid:2.5.4.4',
  ],
  name: [
    'name',
    'displayName',
    'http://schemas.microsoft.com/identity/claims/displayname',
    'urn:oid:2.16.840.1.113730.3.1.241',
  ],
  groups: ['groups', 'Groups', 'memberOf', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'],
};

export type { ConnectionRow };
