import { appRouter, type Meta } from '@atrium/routers';
import { type AnyTRPCProcedure, TRPCError } from '@trpc/server';
import {
  coerceSchema,
  getInputOutputParsers,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  normalizePath,
  type OpenApiProcedure,
  unwrapZodType,
} from 'trpc-to-openapi';
import type { ZodObject, ZodRawShape } from 'zod';
import { queryInput, type RestCall, type RestDispatcher } from './dispatch.ts';
import { decodedParams, normalisedPath } from './path-params.ts';
import { successOutcome } from './render.ts';

/** One REST operation: its procedure, how its input is read, and its success status. */
interface Operation {
  path: string;
  procedure: AnyTRPCProcedure;
  pattern: RegExp;
  status: number;
  /** The input's object schema (unwrapped as the bridge unwraps it), if it is one. */
  schema: ZodObject<ZodRawShape> | undefined;
  /** No input at all (`z.void()`): the procedure gets undefined. */
  voidInput: boolean;
  /** Query keys whose schema is an array: a single value becomes a list of one. */
  arrayKeys: string[];
  coerced: boolean;
  /** A POST that takes its input from the query (`meta.queryInput`). */
  queryInput: boolean;
}

type SchemaDef = { _zod?: { def?: { type?: string; innerType?: SchemaDef } } };

/** An array, or an optional array (the two the bridge wraps a single query value for). */
const isArraySchema = (schema: SchemaDef | undefined): boolean => {
  const def = schema?._zod?.def;
  return def?.type === 'array' || (def?.type === 'optional' && def.innerType?._zod?.def?.type === 'array');
};

function operationOf(path: string, procedure: AnyTRPCProcedure, meta: Meta): Operation {
  const { inputParser } = getInputOutputParsers(procedure as unknown as OpenApiProcedure);
  const unwrapped = unwrapZodType(inputParser, true);
  const schema = instanceofZodTypeObject(unwrapped) ? unwrapped : undefined;
  return {
    path,
    procedure,
    pattern: getPathRegExp(normalizePath(meta.openapi?.path ?? '')),
    status: meta.successStatus ?? 200,
    schema,
    voidInput: instanceofZodTypeLikeVoid(unwrapped),
    arrayKeys: schema ? Object.keys(schema.shape).filter((key) => isArraySchema(schema.shape[key] as SchemaDef)) : [],
    coerced: false,
    queryInput: meta.queryInput === true,
  };
}

/** `method → operations`, in the procedures' order (the bridge's order of matching). */
function operationsByMethod(): Map<string, Operation[]> {
  const table = new Map<string, Operation[]>();
  const procedures = appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta as Meta | undefined;
    if (!meta?.openapi || meta.openapi.enabled === false || procedure._def.type === 'subscription') continue;
    const list = table.get(meta.openapi.method) ?? [];
    list.push(operationOf(path, procedure, meta));
    table.set(meta.openapi.method, list);
  }
  return table;
}

/** The operation a method and path name (matched as the bridge matches), with its raw parameters. */
export function operationFinder(): (
  method: string,
  pathname: string,
) => { op: Operation; groups: Record<string, string> } | undefined {
  const table = operationsByMethod();
  return (method, pathname) => {
    const path = normalisedPath(pathname);
    if (path === undefined) return undefined;
    for (const op of table.get(method) ?? []) {
      const match = op.pattern.exec(path);
      if (match) return { op, groups: match.groups ?? {} };
    }
    return undefined;
  };
}

/** The procedure's input, built as the bridge builds it: query or body, then path parameters. */
function inputOf(op: Operation, call: RestCall, params: Record<string, string>): unknown {
  if (op.voidInput) return undefined;
  // A body when the transport read one (a DELETE marked `bodyOnDelete` too) and the operation takes
  // it, else the query (a POST marked `queryInput`: the widgets' `generate-link?intent=…`).
  const useBody = call.body !== undefined && !op.queryInput;
  const input: Record<string, unknown> = Object.assign({}, useBody ? call.body : queryInput(call.query), params);
  if (op.schema && !useBody) {
    for (const key of op.arrayKeys) {
      if (input[key] !== undefined && !Array.isArray(input[key])) input[key] = [input[key]];
    }
  }
  // Query strings carry only strings: the bridge turns on zod's coercion of the schema's
  // numbers, booleans and dates, once per schema (see routers/src/common/schemas.ts).
  if (op.schema && !op.coerced) {
    coerceSchema(op.schema);
    op.coerced = true;
  }
  return input;
}

/**
 * The direct dispatcher: a REST call goes from a route table built from the procedures'
 * `meta.openapi` straight into its procedure, whose zod schemas validate input and output as
 * on every transport. It answers exactly as the OpenAPI bridge would (tests/src/reliability/
 * dispatchers.http.test.ts), without the bridge's per-request caller and error shape.
 */
export function directDispatcher(): RestDispatcher {
  const find = operationFinder();
  return async (call) => {
    const found = find(call.ex.method, call.ex.pathname);
    if (!found) throw new TRPCError({ code: 'NOT_FOUND', message: 'Not found' });
    const { op, groups } = found;
    const input = inputOf(op, call, decodedParams(groups, call.ex.pathname));
    const data: unknown = await (op.procedure as unknown as (opts: unknown) => Promise<unknown>)({
      path: op.path,
      getRawInput: async () => input,
      ctx: call.ctx,
      type: op.procedure._def.type,
      signal: undefined,
      batchIndex: 0,
    });
    return successOutcome(op.status, data);
  };
}
