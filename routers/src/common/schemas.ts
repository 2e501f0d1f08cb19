import { z } from 'zod';

/** Ids on the wire: a prefix and an opaque rest. Unknown ids are 404, not 422. */
export const Id = z.string().min(1).max(128);

export const Timestamp = z
  .string()
  .meta({ description: 'ISO 8601 UTC, millisecond precision', example: '2026-11-22T18:49:52.123Z' });

export const iso = (value: Date): string => value.toISOString();

/**
 * A timestamptz as PostgreSQL's JSON encoding writes it (`2026-11-22T18:49:52.12+00:00`: the
 * fraction trimmed of trailing zeros, the offset of the session's time zone) in the wire's form
 * (`2026-11-22T18:49:52.120Z`), without a Date: parsing and formatting Dates was a sixth of a
 * list's CPU (profiled). Fractions past milliseconds are cut, as a Date cuts them. The
 * connections run in UTC; any other offset takes the Date path, so the answer is the same.
 */
export function isoOfJson(text: string): string {
  // `YYYY-MM-DDTHH:MM:SS[.f…]+00:00`; anything else (another offset, a year past 9999) via Date.
  if (text.endsWith('+00:00') && text.charCodeAt(10) === 0x54 /* T */ && text.charCodeAt(4) === 0x2d /* - */) {
    if (text.length === 25) return `${text.slice(0, 19)}.000Z`;
    if (text.charCodeAt(19) === 0x2e /* . */) {
      const fraction = text.slice(20, -6);
      return `${text.slice(0, 19)}.${fraction.length >= 3 ? fraction.slice(0, 3) : fraction.padEnd(3, '0')}Z`;
    }
  }
  return new Date(text).toISOString();
}

/** A timestamp on the wire, from a Date or from PostgreSQL's JSON encoding of one. */
export const wireTime = (value: Date | string): string => (typeof value === 'string' ? isoOfJson(value) : iso(value));

/**
 * A boolean for request bodies. trpc-to-openapi turns on zod's coercion for every boolean,
 * number, bigint and date field of an object input it serves — bodies included, and by
 * mutating the shared schema — so `"yes"` would become `true`. A pipe is left alone by that
 * walk, so body fields of those types are declared through these (a test guards it).
 */
export const StrictBoolean = z.boolean().pipe(z.boolean());
export const StrictInt = z.number().int().pipe(z.number().int());

/** Metadata of the contract: ≤ 50 keys, key ≤ 40 chars, value ≤ 600 chars, strings only. */
export const Metadata = z
  .record(z.string().min(1).max(40), z.string().max(600))
  .refine((value) => Object.keys(value).length <= 50, { message: 'metadata may hold at most 50 keys' });

// Paging lives in the kernel (one input per wire style, one envelope); the resources' schemas
// and services take REST's from here.
export { asList, ListMetadata, ListParams, type ListParamsInput, listOf, pageParams } from '../kernel/paging.ts';

/**
 * A query parameter that may be repeated, sent as `name[]`, or comma-separated: always an
 * array of trimmed, non-empty strings.
 */
export const QueryList = z.preprocess((value) => {
  if (value === undefined) return undefined;
  const items = Array.isArray(value) ? value : [value];
  return items
    .flatMap((item) => (typeof item === 'string' ? item.split(',') : [item]))
    .map((item) => (typeof item === 'string' ? item.trim() : item))
    .filter((item) => item !== '');
}, z.array(z.string().max(255)).max(100).optional());
