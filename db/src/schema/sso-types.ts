// The JSON column types of a connection's SSO configuration (columns of `connections` in
// tokens.ts, added by migration 0024), re-exported by sso.ts.

/**
 * One IdP signing certificate of a SAML connection (two at once while the IdP rotates).
 * `renewal_required_at`: when `connection.saml_certificate_renewal_required` was recorded for it
 * (once per certificate; a JSON key, no column).
 */
export type SamlCertificate = {
  pem: string;
  fingerprint_sha256: string;
  not_before: string;
  not_after: string;
  renewal_required_at?: string;
};

/**
 * How IdP attributes become profile fields. Each value names the SAML attribute or OIDC claim;
 * `custom` maps a custom attribute name to the attribute that carries it.
 */
export type AttributeMapping = {
  idp_id?: string;
  email?: string;
  first_name?: string;
  last_name?: string;
  name?: string;
  groups?: string;
  custom?: Record<string, string>;
};

/** The upstream connection domains (`connection_domain` objects), kept on the connection row. */
export type ConnectionDomain = { id: string; domain: string };
