import {
  authenticateApiKey,
  beginIdempotentRequest,
  completeIdempotentRequest,
  type Deps,
  type IdempotencyClaim,
  releaseIdempotentRequest,
  requestHash,
  requireIdempotencyKey,
} from '@atrium/routers';
import type { Exchange } from './exchange.ts';
import type { Outcome } from './render.ts';

/**
 * `Idempotency-Key` on a POST: claims the key for this request, or gives the stored first
 * response (byte for byte, to replay) or 409. Until the procedure middleware of routers/ takes
 * this over, the transport settles the claim with the outcome before writing it.
 */
export async function claimKey(
  deps: Deps,
  ex: Exchange,
  body: unknown,
): Promise<{ claim: IdempotencyClaim } | { replay: Outcome } | undefined> {
  const header = ex.req.headers['idempotency-key'];
  const value = Array.isArray(header) ? header[0] : header;
  if (ex.method !== 'POST' || value === undefined) return undefined;
  const env = await authenticateApiKey(deps, ex.req.headers.authorization);
  const key = requireIdempotencyKey(value);
  const hash = requestHash('POST', ex.pathname, JSON.stringify(body));
  const begun = await beginIdempotentRequest(deps, env.id, key, hash);
  if (begun.kind === 'proceed') return { claim: { environmentId: env.id, key } };
  ex.res.setHeader('Idempotent-Replayed', 'true');
  const text = begun.body === '' ? undefined : begun.body;
  return { replay: { status: begun.status, body: text, contentType: text ? 'application/json' : undefined } };
}

/**
 * Stores the first response before it is acknowledged, so a retry can only ever replay it. A
 * 5xx frees the key instead: the request may not have happened, a retry may run it.
 */
export async function settleKey(deps: Deps, claim: IdempotencyClaim, outcome: Outcome): Promise<void> {
  try {
    if (outcome.status >= 500) await releaseIdempotentRequest(deps, claim.environmentId, claim.key);
    else await completeIdempotentRequest(deps, claim.environmentId, claim.key, outcome.status, outcome.body ?? '');
  } catch (error) {
    deps.log.warn({ err: error }, 'could not store the idempotent response');
  }
}
