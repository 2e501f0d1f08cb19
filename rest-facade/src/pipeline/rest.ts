import { createInnerContext, type Deps } from '@atrium/routers';
import { clientOf, deviceOf, elevatedAccessOf, environmentOf } from './authenticate.ts';
import { parseQuery, readJsonBody } from './body.ts';
import { type RestDispatcher, takesBody } from './dispatch.ts';
import { type Exchange, idempotencyKeyOf } from './exchange.ts';
import { weightOfPage } from './in-flight.ts';
import type { Limits, Refusal } from './limits.ts';
import { bounded, errorOutcome, logFailure, type Outcome, writeError, writeOutcome } from './render.ts';

export interface RestOptions {
  deps: Deps;
  limits: Limits;
  dispatch: RestDispatcher;
  maxResponseBytes: number;
  /** Is this REST call an organization delete (it counts against that limit too)? */
  isOrganizationDelete: (method: string, template: string) => boolean;
  /** The templates of the DELETEs that read a JSON body (`meta.bodyOnDelete`: the widgets' revoke-all). */
  deletesWithBody: ReadonlySet<string>;
}

/** A refusal of the limits, answered (unless its caller left) with `Retry-After`. */
function refuse(ex: Exchange, refusal: Refusal): void {
  ex.req.resume();
  if (!refusal.silent) writeError(ex.res, refusal.error, { 'Retry-After': String(refusal.retryAfter) });
}

/**
 * The REST transport: authenticate → limits → body → dispatch → render. The body stays in the
 * socket until the request has its turn; every error is rendered by the render step.
 */
export function restTransport(options: RestOptions): (ex: Exchange, template: string) => Promise<void> {
  const { deps, limits, dispatch, maxResponseBytes } = options;
  return async (ex, template) => {
    const identity = await limits.identify(ex, 'api');
    const deletes = options.isOrganizationDelete(ex.method, template) ? 1 : 0;
    const counted = limits.count(identity, ex.res, { requests: 1, organizationDeletes: deletes });
    const limited = counted instanceof Promise ? await counted : counted;
    if (limited) return refuse(ex, limited);
    const query = parseQuery(ex.search);
    const waited = await limits.turn(ex.res, weightOfPage(query.limit));
    if (waited) {
      ex.shed = true;
      return refuse(ex, waited);
    }
    let body: Record<string, unknown> | undefined;
    const readsBody = takesBody(ex.method) || (ex.method === 'DELETE' && options.deletesWithBody.has(template));
    if (readsBody) body = await readJsonBody(ex.req);
    else ex.req.resume();
    const { authorization } = ex.req.headers;
    const ctx = createInnerContext(deps, authorization, ex.requestId, idempotencyKeyOf(ex), environmentOf(identity));
    ctx.client = clientOf(identity);
    ctx.device = deviceOf(ex);
    ctx.elevatedAccess = elevatedAccessOf(ex.req);
    let outcome: Outcome;
    try {
      outcome = bounded(await dispatch({ ex, query, body, ctx }), maxResponseBytes);
    } catch (error) {
      outcome = errorOutcome(error);
      if (outcome.status >= 500) logFailure(deps, error, ex);
    }
    // Headers the procedures ask for (`Idempotent-Replayed: true` on a replay).
    writeOutcome(ex.res, outcome, ctx.responseHeaders);
  };
}
