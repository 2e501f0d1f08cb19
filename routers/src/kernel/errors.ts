// The one refusal type of the service (ApiError), its constructors, and the mapping of database
// and validation failures onto it. Transport-free: each codec renders an ApiError its own way.

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

export interface ErrorBody {
  code: string;
  message: string;
  errors?: FieldError[];
}

/**
 * The one error type of the service: a status and the contract's body, independent of any
 * transport. The tRPC adapter (trpc-errors.ts) carries it through tRPC; `contractError` renders any error.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly apiCode: string;
  readonly errors: FieldError[] | undefined;
  /** Seconds to wait before retrying (a 429 or 503): the codecs answer it as `Retry-After`. */
  readonly retryAfterSeconds: number | undefined;
  /**
   * What a refusal carries for the surfaces that declare a variant of it (GraphQL's payload
   * fields: the invitee's e-mail, the password's violations); no codec renders it.
   */
  readonly detail: Readonly<Record<string, unknown>> | undefined;

  constructor(
    status: number,
    apiCode: string,
    message: string,
    errors?: FieldError[],
    retryAfterSeconds?: number,
    detail?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.apiCode = apiCode;
    this.errors = errors;
    this.retryAfterSeconds = retryAfterSeconds;
    this.detail = detail;
  }

  toBody(): ErrorBody {
    return this.errors
      ? { code: this.apiCode, message: this.message, errors: this.errors }
      : { code: this.apiCode, message: this.message };
  }
}

const ENTITY_LABELS = {
  organization: 'Organization',
  organization_domain: 'Organization domain',
  environment: 'Environment',
  api_key: 'API key',
  admin_token: 'Admin token',
  user: 'User',
  organization_membership: 'Organization membership',
  group: 'Group',
  connection: 'Connection',
  directory: 'Directory',
  directory_user: 'Directory user',
  directory_group: 'Directory group',
  it_contact: 'IT contact',
  agent_registration: 'Agent registration',
  client: 'Client',
  webhook_endpoint: 'Webhook endpoint',
  webhook_delivery: 'Webhook delivery',
  invitation: 'Invitation',
  session: 'Session',
  role: 'Role',
  permission: 'Permission',
  redirect_uri: 'Redirect URI',
  profile: 'Profile',
  audit_log_action: 'Audit log action',
} as const;

/** The kinds of record a 404 can name. */
export type Entity = keyof typeof ENTITY_LABELS;

export const notFound = (entity: Entity, id: string) =>
  new ApiError(404, 'entity_not_found', `${ENTITY_LABELS[entity]} not found: '${id}'.`);
export const conflict = (code: string, message: string) => new ApiError(409, code, message);
export const badRequest = (code: string, message: string) => new ApiError(400, code, message);
export const forbidden = (code: string, message: string) => new ApiError(403, code, message);
export const unauthorized = (message = 'Unauthorized: a valid API key is required.') =>
  new ApiError(401, 'unauthorized', message);
/** 429 `rate_limit_exceeded` (or a more specific code), to be retried after `seconds` (at least 1). */
export const rateLimited = (message: string, seconds: number, code = 'rate_limit_exceeded') =>
  new ApiError(429, code, message, undefined, Math.max(1, Math.ceil(seconds)));
export const invalid = (errors: FieldError[], code = 'invalid_request_parameters', message = 'Validation failed.') =>
  new ApiError(422, code, message, errors);
/**
 * A tenant at one of its quotas (context.ts `Quotas`): 422 `quota_exceeded`, naming the quota
 * (as its setting `ATRIUM_QUOTA_<NAME>` spells it, lower-cased) and its limit.
 */
export const quotaExceeded = (quota: string, limit: number, what: string) => {
  const message = `Quota exceeded: ${what} at most ${limit} (quota ${quota}).`;
  return new ApiError(422, 'quota_exceeded', message, [{ field: quota, code: 'quota_exceeded', message }]);
};
export const serviceUnavailable = () =>
  new ApiError(503, 'service_unavailable', 'The service is temporarily unavailable. Try again shortly.');

const unstorableInput = () =>
  invalid([
    {
      field: 'request',
      code: 'unstorable_value',
      message: 'A value in the request cannot be stored (for example a NUL character).',
    },
  ]);

export const emailTaken = () => conflict('email_not_available', 'A user with this email already exists.');
export const userExternalIdTaken = () =>
  conflict('external_id_already_used', 'A user with this external_id already exists.');
export const alreadyMember = () =>
  conflict('organization_membership_already_exists', 'The user already has a membership in this organization.');
export const environmentNameTaken = () =>
  conflict('environment_name_taken', 'An environment with this name already exists; choose another name.');
/** Upstream's codes: one for an environment role's slug, another for an organization role's. */
export const roleSlugTaken = () => conflict('role_slug_conflict', 'A role with this slug already exists.');
export const organizationRoleSlugTaken = () =>
  conflict('organization_role_slug_conflict', 'The organization already has a role with this slug.');
export const permissionSlugTaken = () =>
  conflict('permission_slug_conflict', 'A permission with this slug already exists.');

/**
 * Unique constraints by name, in one table: a race that loses at the database answers exactly
 * what the service's own check would have answered.
 */
const CONSTRAINTS: Readonly<Record<string, () => ApiError>> = {
  environments_name_unique: environmentNameTaken,
  organizations_external_id_unique: () =>
    conflict('external_id_already_used', 'An organization with this external_id already exists.'),
  organization_domains_org_domain_unique: () =>
    conflict('domain_already_exists', 'The organization already has this domain.'),
  organization_domains_verified_unique: () =>
    conflict('domain_verified_by_other_organization', 'The domain is verified by another organization.'),
  users_email_unique: emailTaken,
  users_external_id_unique: userExternalIdTaken,
  organization_memberships_user_org_unique: alreadyMember,
  directory_users_user_name_unique: () =>
    conflict('directory_user_exists', 'A user with this userName already exists in the directory.'),
  directory_users_external_id_unique: () =>
    conflict('directory_user_exists', 'A user with this externalId already exists in the directory.'),
  directory_groups_external_id_unique: () =>
    conflict('directory_group_exists', 'A group with this externalId already exists in the directory.'),
  invitations_pending_unique: () =>
    conflict('invitation_already_exists', 'A pending invitation for this e-mail and organization already exists.'),
  it_contacts_organization_email_unique: () =>
    conflict('it_contact_already_exists', 'The organization already has an IT contact with this email.'),
  it_contacts_active_invitation_unique: () =>
    conflict(
      'it_contact_invitation_already_active',
      'The organization already has an active Admin Portal invitation; revoke it first.',
    ),
  roles_environment_slug_unique: roleSlugTaken,
  roles_organization_slug_unique: organizationRoleSlugTaken,
  permissions_environment_slug_unique: permissionSlugTaken,
};

interface PgErrorLike {
  code?: string;
  constraint?: string;
  constraint_name?: string;
  errno?: string;
  cause?: unknown;
  message?: string;
}

/** Postgres SQLSTATEs and driver codes that mean "the database is not reachable right now". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement timeout)
  '53300', // too_many_connections
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

/** Turns a database error into the contract's error, or returns undefined when it is not one. */
export function fromDatabaseError(error: unknown): ApiError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const e = current as PgErrorLike;
    const constraint = e.constraint_name ?? e.constraint;
    if (e.code === '23505' && constraint) {
      const make = Object.hasOwn(CONSTRAINTS, constraint) ? CONSTRAINTS[constraint] : undefined;
      return make ? make() : conflict('conflict', 'The request conflicts with the current state of the resource.');
    }
    if (e.code === '23503') return conflict('conflict', 'A referenced resource no longer exists.');
    if (e.code === '40001' || e.code === '40P01') {
      return conflict('conflict', 'The request conflicted with a concurrent request; retry it.');
    }
    if (e.code && UNAVAILABLE_CODES.has(e.code)) return serviceUnavailable();
    // Class 22, data exceptions: a value the database cannot take (a NUL character, a number
    // out of range, an unsupported escape) is the caller's input, not a server fault.
    if (e.code && e.code.length === 5 && e.code.startsWith('22')) return unstorableInput();
    current = e.cause;
  }
  return undefined;
}

/**
 * Did this error come from a database that could not be reached or could not answer (a
 * connection error, a shutdown, a statement cancelled by a timeout or by a replica's recovery
 * conflict, 40001)? A read that failed so on the replica is retried on the primary.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as PgErrorLike).code;
    if (code && (UNAVAILABLE_CODES.has(code) || code === '40001')) return true;
    current = (current as PgErrorLike).cause;
  }
  return false;
}

/**
 * Did this error abort its transaction only because a concurrent one won (a deadlock, 40P01, or a
 * serialization failure, 40001)? The same transaction run again may then succeed.
 */
export function isTransactionConflict(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as PgErrorLike).code;
    if (code === '40P01' || code === '40001') return true;
    current = (current as PgErrorLike).cause;
  }
  return false;
}

export interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
}

function fieldErrorOf(issue: ZodIssueLike): FieldError {
  const field = issue.path.map(String).join('.') || 'body';
  const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  if (missing) return { field, code: `${field}_required`, message: `${field} is required` };
  return { field, code: `${field}_invalid`, message: `${field}: ${issue.message}` };
}

/** A zod failure outside tRPC (a GraphQL argument parsed by its area) as the contract's 422. */
export const invalidOfZod = (error: { issues: ZodIssueLike[] }) => invalid(error.issues.map(fieldErrorOf));

/**
 * Any error reaching the edge of a procedure or transport as an ApiError, however wrapped (a
 * transport's error carrying it as `cause`): zod input failures (422), database constraint and
 * connection errors; undefined for a fault (rendered 500).
 */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof ApiError) return cause;
  if (isZodError(cause)) return invalidOfZod(cause);
  return fromDatabaseError(error);
}

/** The contract's status and body of an ApiError, or of a fault (undefined): 500 `server_error`. */
export function contractErrorOf(api: ApiError | undefined): { status: number; body: ErrorBody } {
  if (api) return { status: api.status, body: api.toBody() };
  return { status: 500, body: { code: 'server_error', message: 'An unexpected error occurred.' } };
}

/** Renders any error reaching the edge of the service as the contract's status and body. */
export function contractError(error: unknown): { status: number; body: ErrorBody } {
  return contractErrorOf(toApiError(error));
}

export function isZodError(cause: unknown): cause is { issues: ZodIssueLike[] } {
  return !!cause && typeof cause === 'object' && Array.isArray((cause as { issues?: unknown }).issues);
}
