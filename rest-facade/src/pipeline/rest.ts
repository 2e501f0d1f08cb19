import { ApiError, authenticateApiKey, authenticateClientToken, createInnerContext, type Deps } from '@atrium/routers';
import { clientOf, deviceOf, elevatedAccessOf, environmentOf, type Identity } from './authenticate.ts';
import { type BodyBounds, parseQuery, readJsonBody } from './body.ts';
import type { RestDispatcher } from './dispatch.ts';
import { type Exchange, idempotencyKeyOf } from './exchange.ts';
import { weightOfPage } from './in-flight.ts';
import { type Limits, type Refusal, shareOf } from './limits.ts';
import { bounded, errorOutcome, logFailure, type Outcome, writeError, writeOutcome } from './render.ts';
import type { RouteMatch } from './routes.ts';

export interface RestOptions {
  deps: Deps;
  limits: Limits;
  dispatch: RestDispatcher;
  maxResponseBytes: number;
  /** The size and time bounds of a request body. */
  body: BodyBounds;
  /** Is this REST call an organization delete (it counts against that limit too)? */
  isOrganizationDelete: (method: string, template: string) => boolean;
}

/** A refusal of the limits, answered (unless its caller left) with `Retry-After`. */
function refuse(ex: Exchange, refusal: Refusal): void {
  ex.req.resume();
  if (!refusal.silent) writeError(ex.res, refusal.error, { 'Retry-After': String(refusal.retryAfter) });
}

/** The client surfaces' REST paths, whose procedures take a client or widget token (never an API key). */
const CLIENT_PREFIX = '/_widgets/';

/**
 * Every REST route that reads a body needs a credential (only the JWKS, a GET, is public). A
 * caller the authenticate step found none for (none sent, or refused) gets the refusal its
 * procedure's guard would give, from the same check, before its body is read: a client
 * without a credential never gets to hold a body open. Undefined when the check passes after all.
 */
async function refusalWithoutCredential(
  deps: Deps,
  ex: Exchange,
  template: string,
  identity: Identity | undefined,
): Promise<ApiError | undefined> {
  if (identity?.kind !== 'address') return undefined;
  const { authorization } = ex.req.headers;
  try {
    if (template.startsWith(CLIENT_PREFIX)) await authenticateClientToken(deps, authorization, deviceOf(ex));
    else await authenticateApiKey(deps, authorization);
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/**
 * The REST transport: authenticate → limits → body → turn → dispatch → render. The body is read
 * (bounded in size and time) before the request takes a turn, so a slow body holds a socket and
 * never one of the turns every tenant shares; every error is rendered by the render step.
 */
export function restTransport(
  options: RestOptions,
): (ex: Exchange, match: Extract<RouteMatch, { kind: 'match' }>) => Promise<void> {
  const { deps, limits, dispatch, maxResponseBytes } = options;
  return async (ex, match) => {
    const { template, route, params } = match;
    const identity = await limits.identify(ex, 'api');
    const deletes = options.isOrganizationDelete(ex.method, template) ? 1 : 0;
    const counted = limits.count(identity, ex.res, { requests: 1, organizationDeletes: deletes });
    const limited = counted instanceof Promise ? await counted : counted;
    if (limited) return refuse(ex, limited);
    let body: Record<string, unknown> | undefined;
    if (route.readsBody) {
      const refused = await refusalWithoutCredential(deps, ex, template, identity);
      // The body is left unread, so the connection closes rather than drain it.
      if (refused) return writeError(ex.res, refused, { Connection: 'close' });
      body = await readJsonBody(ex.req, options.body, ex.res);
    } else ex.req.resume();
    const query = parseQuery(ex.search);
    const waited = await limits.turn(ex.res, weightOfPage(query.limit), shareOf(identity));
    if (waited) {
      ex.shed = true;
      return refuse(ex, waited);
    }
    const { authorization } = ex.req.headers;
    const ctx = createInnerContext(deps, authorization, ex.requestId, idempotencyKeyOf(ex), environmentOf(identity));
    ctx.client = clientOf(identity);
    ctx.device = deviceOf(ex);
    ctx.elevatedAccess = elevatedAccessOf(ex.req);
    let outcome: Outcome;
    try {
      outcome = bounded(await dispatch({ ex, route, params, query, body, ctx }), maxResponseBytes);
    } catch (error) {
      outcome = errorOutcome(error);
      if (outcome.status >= 500) logFailure(deps, error, ex);
    }
    // Headers the procedures ask for (`Idempotent-Replayed: true` on a replay).
    writeOutcome(ex.res, outcome, ctx.responseHeaders);
  };
}
