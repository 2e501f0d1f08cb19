// The one module that reaches into tRPC's internals (`_def`, `unstable-core-do-not-import`):
// upgrading @trpc/server touches this file and patches/, nothing else. Everything outside calls
// these plain functions.
import type { AnyTRPCProcedure, AnyTRPCRouter, TRPCError } from '@trpc/server';
import { getErrorShape, middlewareMarker } from '@trpc/server/unstable-core-do-not-import';
import type { Context } from './kernel/context.ts';
import type { Meta } from './trpc-meta.ts';

/** One procedure of the app router, as the route table and the dispatcher see it. */
export interface ProcedureEntry {
  /** Its dotted path (`organizations.create`). */
  path: string;
  type: 'query' | 'mutation' | 'subscription';
  meta: Meta | undefined;
  /** The procedure itself, for libraries that read its parsers (trpc-to-openapi). */
  procedure: AnyTRPCProcedure;
  /** Its input parsers (zod schemas), in the order `.input()` added them. */
  inputs: readonly unknown[];
}

const entriesOf = new WeakMap<AnyTRPCRouter, ProcedureEntry[]>();

/** Every procedure of a router (the app router), in its order. */
export function procedureEntries(router: AnyTRPCRouter): readonly ProcedureEntry[] {
  let entries = entriesOf.get(router);
  if (!entries) {
    const procedures = router._def.procedures as Record<string, AnyTRPCProcedure>;
    entries = Object.entries(procedures).map(([path, procedure]) => ({
      path,
      type: procedure._def.type,
      meta: procedure._def.meta as Meta | undefined,
      procedure,
      inputs: (procedure._def as { inputs?: unknown[] }).inputs ?? [],
    }));
    entriesOf.set(router, entries);
  }
  return entries;
}

/**
 * Runs one procedure with a context and an already-built input, through its middlewares and
 * parsers (as a caller does, without a caller's per-call proxy).
 */
export function callProcedure(entry: ProcedureEntry, ctx: Context, input: unknown): Promise<unknown> {
  return (entry.procedure as unknown as (opts: unknown) => Promise<unknown>)({
    path: entry.path,
    getRawInput: async () => input,
    ctx,
    type: entry.type,
    signal: undefined,
    batchIndex: 0,
  });
}

/** An error in tRPC's JSON shape for a call at `path` (the router's error formatter applied). */
export function trpcErrorShape(router: AnyTRPCRouter, error: TRPCError, path: string): unknown {
  return getErrorShape({ config: router._def._config, error, type: 'unknown', path, input: undefined, ctx: undefined });
}

/** A middleware's successful result made outside `next()` (an idempotent replay). */
export function middlewareResult(data: unknown): { ok: true; data: unknown; marker: typeof middlewareMarker } {
  return { ok: true, data, marker: middlewareMarker };
}
