// SCIM 2.0 (RFC 7643/7644) as the SCIM surface speaks it: schema URNs, the error shape's
// `scimType`s, and the refusals every part of the surface throws (one ApiError family, whose
// `detail.scimType` the SCIM codec renders).
import { ApiError } from '../kernel/errors.ts';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SERVICE_PROVIDER_CONFIG_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
export const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
export const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

/** RFC 7644 §3.12's `scimType` values the surface answers with. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** A SCIM refusal: its status, `scimType` (when the RFC names one) and `detail`. */
export function scimError(status: number, scimType: ScimType | undefined, detail: string): ApiError {
  const code = scimType ? `scim_${scimType}` : `scim_${status}`;
  return new ApiError(status, code, detail, undefined, undefined, scimType ? { scimType } : undefined);
}

export const invalidValue = (detail: string) => scimError(400, 'invalidValue', detail);
export const invalidFilter = (detail: string) => scimError(400, 'invalidFilter', detail);
export const invalidSyntax = (detail: string) => scimError(400, 'invalidSyntax', detail);
export const invalidPath = (detail: string) => scimError(400, 'invalidPath', detail);
export const noTarget = (detail: string) => scimError(400, 'noTarget', detail);
export const mutability = (detail: string) => scimError(400, 'mutability', detail);

/** The `scimType` of any refusal: its own, else the one SCIM gives the service's codes. */
export function scimTypeOf(error: ApiError): ScimType | undefined {
  const own = error.detail?.scimType;
  if (typeof own === 'string') return own as ScimType;
  // A 409 of a concurrent write that lost (`conflict`: "retry it") is no duplicate: Okta and Entra
  // read `uniqueness` as "the resource exists" and go on to match it, so it has no scimType.
  if (error.status === 409) return error.apiCode === 'conflict' ? undefined : 'uniqueness';
  if (error.apiCode === 'invalid_json') return 'invalidSyntax';
  if (error.apiCode === 'quota_exceeded') return undefined;
  if (error.status === 422) return 'invalidValue';
  return undefined;
}

/**
 * The status SCIM answers for a refusal (a validation failure is 400 in SCIM, 422 in the JSON API).
 * A directory over its quota of users or groups (`quota_exceeded`) is 403 without a `scimType`:
 * RFC 7644 section 3.12 keeps 409 for a conflict with an existing resource (`uniqueness`), and
 * Entra ID and Okta read a 409 on a create as "the user exists" and go on to match or update it,
 * while a 403 ("operation not permitted") is logged as a failed create, retried by the next cycle.
 */
export function scimStatusOf(error: ApiError): number {
  if (error.apiCode === 'quota_exceeded') return 403;
  return error.status === 422 ? 400 : error.status;
}

/** A resource's ETag (`meta.version` and the `ETag` header): weak, its write counter. */
export function etagOf(version: number): string {
  return `W/"${version}"`;
}

/**
 * The version an `If-Match` header names, for a write's precondition: undefined when absent or
 * `*`; a version that cannot be ours (another server's ETag) is -1, which matches nothing (412).
 */
export function expectedVersionOf(ifMatch: string | undefined): number | undefined {
  if (ifMatch === undefined) return undefined;
  const value = ifMatch.trim();
  if (value === '' || value === '*') return undefined;
  const match = /^(?:W\/)?"(\d{1,9})"$/.exec(value);
  return match ? Number(match[1]) : -1;
}

/**
 * A SCIM boolean as identity providers send it: JSON booleans, and Entra ID's strings "True" and
 * "False" (any case). Undefined for anything else.
 */
export function booleanOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  return undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
