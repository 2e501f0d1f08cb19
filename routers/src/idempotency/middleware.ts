import type { Context } from '../kernel/context.ts';
import type { Deps } from '../kernel/deps.ts';
import { ApiError, type ErrorBody } from '../kernel/errors.ts';
import type { IdempotencyClaim, Scope } from '../kernel/scope.ts';
import { isSealed, seal, unseal } from '../signing/material.ts';
import {
  beginIdempotentRequest,
  completeIdempotentRequest,
  type IdempotencyBegin,
  markingDb,
  releaseIdempotentRequest,
  requestFingerprint,
  requireIdempotencyKey,
} from './service.ts';

/** What a procedure's middleware gets that the idempotency step reads. */
export interface IdempotentCall {
  ctx: Context;
  type: string;
  path: string;
  meta?: { openapi?: { method?: string }; successStatus?: number; secretResponse?: true } | undefined;
  getRawInput: () => Promise<unknown>;
}

type CallResult = { ok: true; data: unknown } | { ok: false; error: unknown };

/**
 * What the calling transport supplies, so this step knows none: its result for a replayed
 * success, and the contract's status and body of a failed call (trpc.ts passes tRPC's).
 */
export interface IdempotencyCodec<R> {
  replayed(data: unknown): R;
  contractOf(error: unknown): { status: number; body: ErrorBody };
}

/** Mutations the REST surface serves as POST (or not at all) take the key; others ignore it. */
function takesKey(call: IdempotentCall): boolean {
  return call.type === 'mutation' && (call.meta?.openapi?.method ?? 'POST') === 'POST';
}

/**
 * `Idempotency-Key` on an API-key-authenticated mutation (run by the procedures' guard in
 * trpc.ts, once the caller's environment is known): claims the key for the call, bound to the
 * procedure's path and raw input, and stores its result for 24 h; or replays the stored result,
 * or refuses with 409 (service.ts). `run` is the rest of the call, given the Scope to use.
 */
export async function idempotencyStep<R extends CallResult>(
  call: IdempotentCall,
  scope: Scope,
  run: (scope: Scope) => Promise<R>,
  codec: IdempotencyCodec<R>,
): Promise<R> {
  const header = call.ctx.idempotencyKey;
  if (header === undefined || !takesKey(call)) return run(scope);
  const claim: IdempotencyClaim = { environmentId: scope.env.id, key: requireIdempotencyKey(header) };
  const fingerprint = requestFingerprint(call.path, await call.getRawInput());
  const begun = await beginIdempotentRequest(scope.deps, claim.environmentId, claim.key, fingerprint);
  if (begun.kind === 'replay') return codec.replayed(replay(call.ctx, claim, begun));
  const result = await run({ ...scope, db: markingDb(scope.db, claim), idempotency: claim });
  await settle(call, scope, claim, result, codec.contractOf);
  return result;
}

/** The stored body of a response with a secret, sealed to its environment and key (JSON never looks sealed). */
const bodyContext = (claim: IdempotencyClaim) => `idempotency:${claim.environmentId}:${claim.key}`;
const sealSecretBody = (deps: Deps, claim: IdempotencyClaim, body: string) =>
  seal(deps.tokens.masterKey, bodyContext(claim), Buffer.from(body, 'utf8'));
const openSecretBody = (deps: Deps, claim: IdempotencyClaim, sealed: string) =>
  unseal(deps.tokens.masterKey, bodyContext(claim), sealed, 'A stored idempotent response').toString('utf8');

/**
 * The stored first result, as the call's own: its output (the JSON text as stored, so the REST
 * body is byte for byte the first one, made a result by the codec) or its error, rebuilt from
 * the contract's body.
 */
function replay(ctx: Context, claim: IdempotencyClaim, stored: Extract<IdempotencyBegin, { kind: 'replay' }>): unknown {
  ctx.responseHeaders['Idempotent-Replayed'] = 'true';
  if (isSealed(stored.body)) stored = { ...stored, body: openSecretBody(ctx.deps, claim, stored.body) };
  if (stored.status >= 400) {
    const body = JSON.parse(stored.body) as ErrorBody;
    throw new ApiError(stored.status, body.code, body.message, body.errors);
  }
  const data: unknown = stored.body === '' ? undefined : JSON.parse(stored.body);
  return data;
}

/**
 * Stores the call's result (status `meta.successStatus ?? 200` and its JSON text, or a 4xx
 * and its contract body) before it is answered, so a retry can only ever replay it. A 5xx frees
 * the key instead: the call may not have happened, a retry may run it.
 */
async function settle(
  call: IdempotentCall,
  scope: Scope,
  claim: IdempotencyClaim,
  result: CallResult,
  contractOf: IdempotencyCodec<unknown>['contractOf'],
): Promise<void> {
  try {
    if (result.ok) {
      const status = call.meta?.successStatus ?? 200;
      const body = status === 204 ? '' : (JSON.stringify(result.data) ?? '');
      const stored = call.meta?.secretResponse ? sealSecretBody(scope.deps, claim, body) : body;
      await completeIdempotentRequest(scope.deps, claim, status, stored);
      return;
    }
    const { status, body } = contractOf(result.error);
    if (status >= 500) await releaseIdempotentRequest(scope.deps, claim);
    else await completeIdempotentRequest(scope.deps, claim, status, JSON.stringify(body));
  } catch (error) {
    scope.deps.log.warn({ err: error }, 'could not store the idempotent response');
  }
}
