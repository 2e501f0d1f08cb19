// `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9): which attributes a response
// returns. `id`, `schemas` and `meta` are always returned; names are case-insensitive, and
// `name.givenName`, an extension's `urn:…:User:department`, or `members.value` (of each value of a
// multi-valued attribute) select sub-attributes.
import { invalidValue, isRecord } from './protocol.ts';

const ALWAYS = new Set(['id', 'schemas', 'meta']);
const MAX_NAMES = 100;

/** The attribute names of a query parameter (comma-separated), each split into its path. */
export function attributeList(text: string | undefined): string[][] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length > MAX_NAMES) throw invalidValue(`At most ${MAX_NAMES} attributes may be named.`);
  return names.map(pathOf);
}

function pathOf(name: string): string[] {
  const urn = /^(urn:.*):([^:]+)$/i.exec(name);
  if (urn) return [urn[1] as string, ...(urn[2] as string).split('.')];
  return name.split('.');
}

function keyIn(resource: Record<string, unknown>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(resource).find((key) => key.toLowerCase() === lower);
}

/** Does the resource name (any case) a top-level attribute (`members`) the projection leaves out? */
export function excludes(name: string, attributes: string[][] | undefined, excluded: string[][] | undefined): boolean {
  const lower = name.toLowerCase();
  if (attributes) return !attributes.some((path) => path[0]?.toLowerCase() === lower);
  return excluded?.some((path) => path.length === 1 && path[0]?.toLowerCase() === lower) === true;
}

function pick(resource: Record<string, unknown>, path: string[], into: Record<string, unknown>): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  const key = keyIn(resource, head);
  if (key === undefined) return;
  const value = resource[key];
  if (rest.length > 0 && Array.isArray(value)) {
    // A sub-attribute of a multi-valued attribute (`members.value`, `emails.type`): of each value.
    const picked = Array.isArray(into[key]) ? (into[key] as unknown[]) : [];
    into[key] = value.map((item, i) => {
      if (!isRecord(item)) return item;
      const nested = isRecord(picked[i]) ? (picked[i] as Record<string, unknown>) : {};
      pick(item, rest, nested);
      return nested;
    });
    return;
  }
  if (rest.length === 0 || !isRecord(value)) {
    into[key] = value;
    return;
  }
  const nested = isRecord(into[key]) ? (into[key] as Record<string, unknown>) : {};
  pick(value, rest, nested);
  into[key] = nested;
}

function drop(resource: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  const key = keyIn(resource, head);
  if (key === undefined || ALWAYS.has(key)) return;
  if (rest.length === 0) {
    delete resource[key];
    return;
  }
  const value = resource[key];
  if (Array.isArray(value)) {
    // A sub-attribute of a multi-valued attribute: dropped from each value.
    resource[key] = value.map((item) => {
      if (!isRecord(item)) return item;
      const copy = { ...item };
      drop(copy, rest);
      return copy;
    });
  } else if (isRecord(value)) {
    const copy = { ...value };
    drop(copy, rest);
    resource[key] = copy;
  }
}

/** The resource as the projection returns it. */
export function project(
  resource: Record<string, unknown>,
  attributes: string[][] | undefined,
  excluded: string[][] | undefined,
): Record<string, unknown> {
  if (attributes) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(resource)) if (ALWAYS.has(key)) out[key] = resource[key];
    for (const path of attributes) pick(resource, path, out);
    return out;
  }
  if (excluded) {
    const out = { ...resource };
    for (const path of excluded) drop(out, path);
    return out;
  }
  return resource;
}
