// SCIM PATCH (RFC 7644 §3.5.2) as Entra ID and Okta send it: the request read and each operation
// normalised (the op in any case, Entra's string booleans), then applied to a User with
// `scim-patch` (paths with filters, pathless values with dotted keys, the enterprise extension).
import type { ScimPatchOperation } from 'scim-patch';
import { lazy } from '../lib/lazy.ts';
import { booleanOf, invalidSyntax, invalidValue, isRecord, noTarget, PATCH_SCHEMA, scimError } from './protocol.ts';

/** scim-patch loads with the first User PATCH. */
const loadScimPatch = lazy(() => import('scim-patch'));
type ScimPatch = Awaited<ReturnType<typeof loadScimPatch>>['scimPatch'];

/** A User after a PATCH's operations (nothing stored). */
export type UserPatcher = (resource: Record<string, unknown>, operations: PatchOperation[]) => Record<string, unknown>;

/** The most operations one PATCH may hold. */
export const MAX_PATCH_OPERATIONS = 1000;

export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string | undefined;
  value: unknown;
}

/** The operations of a PatchOp request body; 400 `invalidSyntax` for anything else. */
export function operationsOf(body: Record<string, unknown>): PatchOperation[] {
  const schemas = body.schemas;
  if (Array.isArray(schemas) && schemas.length > 0 && !schemas.includes(PATCH_SCHEMA)) {
    throw invalidSyntax(`A PATCH body has the schema '${PATCH_SCHEMA}'.`);
  }
  const operations = body.Operations ?? body.operations;
  if (!Array.isArray(operations) || operations.length === 0) {
    throw invalidSyntax("A PATCH body needs a non-empty 'Operations' array.");
  }
  if (operations.length > MAX_PATCH_OPERATIONS) {
    throw invalidSyntax(`A PATCH holds at most ${MAX_PATCH_OPERATIONS} operations.`);
  }
  return operations.map((operation) => normaliseOp(operation));
}

/** One operation with its op lower-cased (Entra sends `Replace`) and its path checked. */
export function normaliseOp(operation: unknown): PatchOperation {
  if (!isRecord(operation)) throw invalidSyntax('Each operation must be an object.');
  const op = typeof operation.op === 'string' ? operation.op.toLowerCase() : '';
  if (op !== 'add' && op !== 'replace' && op !== 'remove') {
    throw invalidSyntax(`'op' must be 'add', 'replace' or 'remove'.`);
  }
  const path = operation.path;
  if (path !== undefined && path !== null && (typeof path !== 'string' || path.length > 512)) {
    throw invalidSyntax("'path' must be a string of at most 512 characters.");
  }
  const trimmed = typeof path === 'string' && path.trim() !== '' ? path.trim() : undefined;
  if (op !== 'remove' && operation.value === undefined) throw invalidValue(`An '${op}' operation needs a 'value'.`);
  return { op, path: trimmed, value: operation.value };
}

/** Entra's string booleans where SCIM has booleans (`active`, a pathless `{active: "False"}`). */
function booleanValues(operation: PatchOperation): PatchOperation {
  const { path, value } = operation;
  if (path !== undefined && /^active$/i.test(path)) {
    const active = booleanOf(value);
    return active === undefined ? operation : { ...operation, path: 'active', value: active };
  }
  if (path === undefined && isRecord(value)) {
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const active = /^active$/i.test(key) ? booleanOf(value[key]) : undefined;
      copy[active === undefined ? key : 'active'] = active ?? value[key];
    }
    return { ...operation, value: copy };
  }
  return operation;
}

/**
 * Path segments that name JavaScript's object machinery, not an attribute: scim-patch would walk
 * into them (`__proto__.x` would change every object of the process), so they are refused.
 */
const UNSAFE_SEGMENT = /__proto__|(^|[.:])(constructor|prototype)(?=$|[.[])/;

function refuseUnsafe(path: string): void {
  if (UNSAFE_SEGMENT.test(path))
    throw scimError(400, 'invalidPath', `The path '${path.slice(0, 100)}' is not an attribute.`);
}

/** The readOnly attributes a PATCH may not target. */
const READ_ONLY = /^(id|meta)(\.|$)/i;

/** What scim-patch's errors mean in SCIM's terms. */
function patchRefusal(error: unknown): never {
  const code = (error as { scimCode?: unknown }).scimCode;
  const message = error instanceof Error ? error.message : 'The PATCH cannot be applied.';
  if (code === 'noTarget' || /no target/i.test(message)) throw noTarget(message);
  if (/path/i.test(message)) throw scimError(400, 'invalidPath', message);
  throw invalidValue(message);
}

/**
 * The function that applies a PATCH to a User, once scim-patch is loaded: taken before the write's
 * transaction, so that the first PATCH of a process holds no row lock while the package loads.
 */
export async function userPatcher(): Promise<UserPatcher> {
  const { scimPatch } = await loadScimPatch();
  return (resource, operations) => patchUser(scimPatch, resource, operations);
}

/** A User after the operations, applied in order to a copy of `resource`; nothing is stored here. */
function patchUser(
  scimPatch: ScimPatch,
  resource: Record<string, unknown>,
  operations: PatchOperation[],
): Record<string, unknown> {
  const ops = operations.map(booleanValues).map((operation) => {
    if (operation.path !== undefined) refuseUnsafe(operation.path);
    if (operation.path === undefined && isRecord(operation.value))
      for (const key of Object.keys(operation.value)) refuseUnsafe(key);
    if (operation.path !== undefined && READ_ONLY.test(operation.path)) {
      throw scimError(400, 'mutability', `'${operation.path}' cannot be changed.`);
    }
    return operation.path === undefined
      ? { op: operation.op, value: operation.value }
      : { op: operation.op, path: operation.path, value: operation.value };
  }) as ScimPatchOperation[];
  const copy = structuredClone(resource) as Record<string, unknown> & { schemas: string[]; meta: never };
  try {
    return scimPatch(copy, ops, { mutateDocument: true, treatMissingAsAdd: true }) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof Error && (error as { scimCode?: unknown }).scimCode !== undefined) patchRefusal(error);
    if (error instanceof Error && /scim|path|patch/i.test(error.message)) patchRefusal(error);
    throw error;
  }
}
