// The service's one refusal type (kernel/errors.ts ApiError) carried through tRPC, and tRPC's own
// refusals (a body it could not parse, an unknown procedure) mapped back onto it.
import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import {
  ApiError,
  badRequest,
  contractErrorOf,
  type ErrorBody,
  type FieldError,
  isZodError,
  toApiError,
  unauthorized,
} from './kernel/errors.ts';

/**
 * tRPC's own refusals of a request it could not read: input that is not JSON (`?input=%7Bbad`,
 * a bad body) is 400 `invalid_json`; a batch whose input is not an object, 400 `invalid_request`.
 */
function malformedInput(error: TRPCError): ApiError | undefined {
  if (error.code !== 'BAD_REQUEST' || isZodError(error.cause)) return undefined;
  if (error.cause instanceof SyntaxError) return badRequest('invalid_json', 'The request input is not valid JSON.');
  return badRequest('invalid_request', error.message);
}

/** tRPC's own error codes (a route or body it refused before any procedure ran) as the contract's. */
const TRPC_REFUSALS: Partial<Record<TRPC_ERROR_CODE_KEY, () => ApiError>> = {
  PARSE_ERROR: () => badRequest('invalid_json', 'The request body is not valid JSON.'),
  PAYLOAD_TOO_LARGE: () => new ApiError(413, 'payload_too_large', 'The request body is too large.'),
  UNSUPPORTED_MEDIA_TYPE: () =>
    new ApiError(415, 'unsupported_media_type', 'Request bodies must be sent as application/json.'),
  NOT_FOUND: () => new ApiError(404, 'route_not_found', 'No such route.'),
  METHOD_NOT_SUPPORTED: () => new ApiError(405, 'method_not_allowed', 'Method not allowed.'),
};

/**
 * Any error reaching the edge of tRPC as an ApiError: the kernel's mapping (errors.ts
 * `toApiError`), then tRPC's own refusals; undefined for a fault (rendered 500).
 */
export function apiErrorOf(error: unknown): ApiError | undefined {
  const api = toApiError(error);
  if (api || !isTRPCError(error)) return api;
  const malformed = malformedInput(error);
  if (malformed) return malformed;
  if (error.code === 'UNAUTHORIZED') return unauthorized(error.message);
  return TRPC_REFUSALS[error.code]?.();
}

/** A TRPCError, also one made by another copy of `@trpc/server` (tRPC's own test, by name). */
function isTRPCError(error: unknown): error is TRPCError {
  return error instanceof TRPCError || (error instanceof Error && error.name === 'TRPCError');
}

/** The contract's status and body of any error leaving tRPC (its own refusals included). */
export function trpcContractError(error: unknown): { status: number; body: ErrorBody } {
  return contractErrorOf(apiErrorOf(error));
}

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * An ApiError as tRPC carries it: a TRPCError whose code matches the contract's status (tRPC
 * derives its HTTP status from it), with the ApiError as its cause and its fields alongside, so
 * a server-side caller reads `status` and `apiCode` as from the ApiError itself.
 */
export class TRPCApiError extends TRPCError {
  declare readonly cause: ApiError;
  readonly status: number;
  readonly apiCode: string;
  readonly errors: FieldError[] | undefined;

  constructor(api: ApiError) {
    super({ code: TRPC_CODE_BY_STATUS[api.status] ?? 'INTERNAL_SERVER_ERROR', message: api.message, cause: api });
    // tRPC recognises its errors by class or, across copies of the package, by this name.
    this.name = 'TRPCError';
    this.status = api.status;
    this.apiCode = api.apiCode;
    this.errors = api.errors;
  }
}

/** The one mapping of the service's errors onto tRPC; faults stay as they are (tRPC answers 500). */
export function asTRPCError(error: unknown): TRPCError {
  if (error instanceof TRPCApiError) return error;
  const api = apiErrorOf(error);
  if (api) return new TRPCApiError(api);
  return error instanceof TRPCError ? error : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: error });
}
