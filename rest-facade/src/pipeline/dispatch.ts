import type { Context } from '@atrium/routers';
import type { Exchange } from './exchange.ts';
import type { Outcome } from './render.ts';

/** A REST call once its body is read: what a dispatcher needs to run its procedure. */
export interface RestCall {
  ex: Exchange;
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

/** Which dispatcher serves the REST paths (see dispatch-direct.ts and dispatch-bridge.ts). */
export type DispatcherKind = 'direct' | 'bridge';

/** Does the method carry its input in the body (else in the query string)? As the bridge decides. */
export function takesBody(method: string): boolean {
  return method !== 'GET' && method !== 'DELETE';
}

/**
 * The query as the bridge hands it to a procedure: a key sent once is a string, a repeated one
 * an array, and an empty value is left out.
 */
export function queryInput(query: Record<string, string | string[]>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key in query) {
    const value = query[key];
    if (value) input[key] = Array.isArray(value) && value.length === 1 ? value[0] : value;
  }
  return input;
}
