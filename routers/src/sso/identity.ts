/**
 * What a protocol module (SAML in `saml/`, OIDC in `oidc/`) hands to the SSO service once it has
 * verified the identity provider's answer: the person, mapped through the connection's attribute
 * mapping. Nothing here is trusted before verification; nothing secret is kept in it.
 */
/**
 * A verified answer that may be used once (a SAML assertion's id, kept until its NotOnOrAfter
 * plus the clock skew): the SSO service remembers it in the transaction that decides the sign-in,
 * the one that completes it or the one that records its refusal.
 */
export interface AnswerUse {
  assertionId: string;
  expiresAt: Date;
}

export interface SsoIdentity {
  /** The IdP's stable id of the person (SAML NameID or mapped attribute; OIDC `sub`). */
  idpId: string;
  email: string;
  firstName?: string;
  lastName?: string;
  name?: string;
  groups?: string[];
  customAttributes: Record<string, unknown>;
  /** Every attribute or claim as received (the profile's `raw_attributes`). */
  rawAttributes: Record<string, unknown>;
  /** The answer's one use, when its protocol has one to remember (SAML). */
  use?: AnswerUse;
}

/**
 * A refused answer from the identity provider. `reason` is a short, stable code (such as
 * `invalid_signature`, `replayed_assertion`, `in_response_to_mismatch`, `audience_mismatch`,
 * `expired`, `idp_initiated_disabled`, `state_mismatch`, `nonce_mismatch`, `invalid_id_token`)
 * that goes into `authentication.sso_failed` and the error page; never a secret or raw XML.
 */
export class SsoFailure extends Error {
  /** The verified answer this refusal spends (refused after its signature was accepted): remembered too. */
  use?: AnswerUse;

  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'SsoFailure';
  }
}

/** The refusal of an answer the connection has accepted before. */
export const replayedAnswer = () => new SsoFailure('replayed_assertion', 'This assertion has been used already.');
