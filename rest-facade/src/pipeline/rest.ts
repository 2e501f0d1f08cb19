import { ApiError, authenticateApiKey, authenticateClientToken, type Deps } from '@atrium/routers';
import { clientRefusalOf, deviceOf, type Identity } from './authenticate.ts';
import { parseQuery } from './body.ts';
import type { RestDispatcher } from './dispatch.ts';
import type { Exchange } from './exchange.ts';
import { weightOfPage } from './in-flight.ts';
import type { Call, Codec } from './pipeline.ts';
import type { Cost } from './rate-limit.ts';
import { bounded, type Outcome, writeError, writeOutcome } from './render.ts';
import type { MatchedRoute } from './routes.ts';

export interface RestOptions {
  deps: Deps;
  dispatch: RestDispatcher;
  maxResponseBytes: number;
  /** Is this REST call an organization delete (it counts against that limit too)? */
  isOrganizationDelete: (method: string, template: string) => boolean;
}

/** A REST request: the route the table matched (with its parameters) and its query, as the dispatcher reads them. */
export interface RestRequest extends Call {
  matched: MatchedRoute;
  query: Record<string, string | string[]>;
}

// What a REST call costs, shared rather than made per request.
const ONE_REQUEST: Cost = { requests: 1, organizationDeletes: 0 };
const ONE_DELETE: Cost = { requests: 1, organizationDeletes: 1 };

/** The client surfaces' REST paths, whose procedures take a client or widget token (never an API key). */
const CLIENT_PREFIX = '/_widgets/';

/**
 * Every REST route that reads a body needs a credential (only the JWKS, a GET, is public). A
 * caller the authenticate step found none for (none sent, or refused) gets the refusal its
 * procedure's guard would give, from the same check, before its body is read. Undefined when
 * the check passes after all.
 */
async function refusalWithoutCredential(
  deps: Deps,
  ex: Exchange,
  template: string,
  identity: Identity,
): Promise<ApiError | undefined> {
  const { authorization } = ex.req.headers;
  const client = template.startsWith(CLIENT_PREFIX);
  // The authenticate step refused this client token already (its held permissions read once, not twice).
  const refused = client ? clientRefusalOf(identity) : undefined;
  if (refused) return refused;
  try {
    if (client) await authenticateClientToken(deps, authorization, deviceOf(ex));
    else await authenticateApiKey(deps, authorization);
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/**
 * The REST codec: a call is its route's template, its query (a page weighs by its `limit`) and
 * a JSON body for the methods that carry one; its outcome and every error are the contract's
 * JSON (render.ts), with the headers the procedures ask for (`Idempotent-Replayed: true`).
 */
export function restCodec(options: RestOptions): Codec<RestRequest, Outcome> {
  const { deps, dispatch, maxResponseBytes, isOrganizationDelete } = options;
  return {
    surface: 'api',
    decode(ex, matched) {
      const route = matched as MatchedRoute;
      const query = parseQuery(ex.search);
      return {
        cost: isOrganizationDelete(ex.method, route.template) ? ONE_DELETE : ONE_REQUEST,
        reads: route.route.readsBody ? 'json' : undefined,
        weight: weightOfPage(query.limit),
        calls: 1,
        body: undefined,
        matched: route,
        query,
      };
    },
    credential(ex, call, identity: Identity | undefined) {
      if (call.reads === undefined || identity?.kind !== 'address') return undefined;
      return refusalWithoutCredential(deps, ex, call.matched.template, identity);
    },
    dispatch: (ex, call, ctx) =>
      dispatch({ ex, route: call.matched.route, params: call.matched.params, query: call.query, body: call.body, ctx }),
    encode(ex, _call, outcome, ctx) {
      writeOutcome(ex, bounded(outcome, maxResponseBytes), ctx.responseHeaders);
    },
    encodeError(ex, error, headers) {
      writeError(ex, error, headers);
    },
  };
}
