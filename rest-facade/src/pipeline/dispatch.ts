import { type Context, callProcedure } from '@atrium/routers';
import { coerceSchema } from 'trpc-to-openapi';
import type { Exchange } from './exchange.ts';
import { type Outcome, successOutcome } from './render.ts';
import type { RestRoute } from './routes.ts';

/** A REST call once its body is read: what the dispatcher needs to run its procedure. */
export interface RestCall {
  ex: Exchange;
  /** The operation the route table matched, and its decoded path parameters. */
  route: RestRoute;
  params: Record<string, string>;
  /** The query string as `parseQuery` reads it. */
  query: Record<string, string | string[]>;
  /**
   * The JSON body of a POST, PUT or PATCH, or of a DELETE marked `bodyOnDelete` (`{}` when none
   * was sent); undefined otherwise.
   */
  body: Record<string, unknown> | undefined;
  ctx: Context;
}

/** Runs a REST call's procedure: its outcome, or the procedure's error thrown. */
export type RestDispatcher = (call: RestCall) => Promise<Outcome>;

/**
 * The query as trpc-to-openapi hands it to a procedure: a key sent once is a string, a
 * repeated one an array, and an empty value is left out.
 */
export function queryInput(query: Record<string, string | string[]>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key in query) {
    const value = query[key];
    if (value) input[key] = Array.isArray(value) && value.length === 1 ? value[0] : value;
  }
  return input;
}

/** The procedure's input, built as trpc-to-openapi builds it: query or body, then path parameters. */
function inputOf(route: RestRoute, call: RestCall): unknown {
  if (route.voidInput) return undefined;
  // A body when the transport read one (a DELETE marked `bodyOnDelete` too) and the operation takes
  // it, else the query (a POST marked `queryInput`: the widgets' `generate-link?intent=...`).
  const useBody = call.body !== undefined && !route.queryInput;
  const input: Record<string, unknown> = Object.assign({}, useBody ? call.body : queryInput(call.query), call.params);
  if (route.schema && !useBody) {
    for (const key of route.arrayKeys) {
      if (input[key] !== undefined && !Array.isArray(input[key])) input[key] = [input[key]];
    }
  }
  // Query strings carry only strings: zod's coercion of the schema's numbers, booleans and
  // dates is turned on, once per schema, as trpc-to-openapi does (routers/src/common/schemas.ts).
  if (route.schema && !route.coerced) {
    coerceSchema(route.schema);
    route.coerced = true;
  }
  return input;
}

/**
 * The REST dispatcher: the route the table matched goes straight into its procedure, whose zod
 * schemas validate input and output as on every transport. It answers exactly as
 * trpc-to-openapi's handler would (tests/src/reliability/dispatchers.http.test.ts), without
 * its per-request caller and error shape.
 */
export const dispatchRoute: RestDispatcher = async (call) => {
  const data = await callProcedure(call.route.entry, call.ctx, inputOf(call.route, call));
  return successOutcome(call.route.status, data);
};
