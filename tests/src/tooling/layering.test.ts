import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLayering, formatViolations, type LayeringViolation } from '../../../scripts/check-layering.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * A small tree that breaks each rule of `npm run lint`'s layering check once, beside files that
 * keep them, checked with the repository's own rules (.dependency-cruiser.cjs and the script).
 */
const FIXTURE: Record<string, string> = {
  'routers/package.json': '{ "name": "@atrium/routers" }',
  'rest-facade/package.json': '{ "name": "@atrium/rest-facade" }',
  'web/package.json': '{ "name": "@atrium/web" }',
  // The kernel reaching a surface and a transport.
  'routers/src/kernel/principals.ts': [
    "import type { TRPCError } from '@trpc/server';",
    "import { adminProcedure } from '../admin/router.ts';",
    'export const principal = (e: TRPCError) => [e, adminProcedure];',
  ].join('\n'),
  'routers/src/kernel/errors.ts': 'export const refused = 403;',
  'routers/src/admin/router.ts': "import { t } from '../trpc.ts';\nexport const adminProcedure = t;",
  'routers/src/trpc.ts': "import { refused } from './kernel/errors.ts';\nexport const t = refused;",
  // A resource: its router.ts may import the procedure files; its service may not, nor a surface.
  'routers/src/widgets/router.ts':
    "import { t } from '../trpc.ts';\nimport { make } from './service.ts';\nexport const w = [t, make];",
  'routers/src/widgets/service.ts': [
    "import { adminProcedure } from '../admin/router.ts';",
    "import { t } from '../trpc.ts';",
    "import type { Part } from './parts.ts';",
    'export const make = (p?: Part) => [adminProcedure, t, p];',
  ].join('\n'),
  // A ring through a type import.
  'routers/src/widgets/parts.ts': "import type { Whole } from './whole.ts';\nexport type Part = { whole?: Whole };",
  'routers/src/widgets/whole.ts': "import type { Part } from './parts.ts';\nexport type Whole = { parts: Part[] };",
  // tRPC's internals: the adapter may, a facade module may not.
  'routers/src/trpc-adapter.ts': [
    "import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';",
    'export const procedures = (r: { _def: { procedures: unknown } }) => [r._def.procedures, getErrorShape];',
  ].join('\n'),
  'rest-facade/src/openapi.ts': [
    'export const metaOf = (p: { _def: { meta: unknown } }) => p._def.meta;',
    "export const typeOf = (p: Record<string, { type: string }>) => p['_def']?.type;",
  ].join('\n'),
  // The limits' steps: only the pipeline definition calls them.
  'rest-facade/src/pipeline/pipeline.ts': [
    'type Limits = { identify(): unknown; count(): unknown; turn(): unknown };',
    'export const run = (limits: Limits) => [limits.identify(), limits.count(), limits.turn()];',
  ].join('\n'),
  'rest-facade/src/pipeline/graphql.ts': [
    'type Limits = { identify(): unknown; count(): unknown; turn(): unknown };',
    'export const run = (o: { limits: Limits }, rows: unknown[]) => [o.limits.turn(), rows.length];',
  ].join('\n'),
  // A table owned by one resource's store: named there, and (wrongly) in another store and a service.
  'db/src/schema/gadgets.ts': [
    "import { pgTable, text } from 'drizzle-orm/pg-core';",
    '/** Gadgets. */',
    '// @owner routers/src/gadgets',
    "export const gadgets = pgTable('gadgets', { id: text('id') });",
    "export const spares = pgTable('spares', { id: text('id') });",
  ].join('\n'),
  'routers/src/gadgets/store.ts': [
    "import { gadgets } from '@atrium/db';",
    "import { sql } from 'drizzle-orm';",
    'export const all = () => [gadgets, sql`select id from gadgets`];',
  ].join('\n'),
  'routers/src/gadgets/parts/store.ts':
    "import { sql } from 'drizzle-orm';\nexport const one = sql`select 1 from gadgets`;",
  'routers/src/sprockets/store.ts': [
    "import { gadgets, spares } from '@atrium/db';",
    "import { sql } from 'drizzle-orm';",
    '// gadgets in a comment, a string that is not SQL, and a column of that name (s.gadgets) do not count',
    "export const w = () => [gadgets, spares, 'gadgets', sql`select s.gadgets from spares s`];",
  ].join('\n'),
  'routers/src/sprockets/count.ts':
    "import { sql } from 'drizzle-orm';\nexport const n = sql.raw('select count(*) from gadgets');",
  // The browser apps' .tsx files are scanned too: a ring between two of them.
  'web/src/main.tsx': "import { Row } from './row.tsx';\nexport const Main = () => <Row />;",
  'web/src/row.tsx': "import { Main } from './main.tsx';\nexport const Row = () => <div>{String(Main)}</div>;",
};

let root: string;
let violations: LayeringViolation[];
let comments: Map<string, string>;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'atrium-layering-'));
  for (const [path, text] of Object.entries(FIXTURE)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), `${text}\n`);
  }
  // The fixture resolves @trpc/server and friends as the repository does.
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  ({ violations, comments } = await checkLayering({ root, cache: false }));
}, 60_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The violations as `file rule to` lines, sorted. */
const lines = (list: LayeringViolation[]) => list.map((v) => `${v.from} ${v.rule} ${v.to}`).sort();

describe('the layering check', () => {
  it('keeps the kernel below everything: no other folder of routers/src, no transport', () => {
    expect(lines(violations.filter((v) => v.from.startsWith('routers/src/kernel/')))).toEqual([
      'routers/src/kernel/principals.ts kernel-below-all routers/src/admin/router.ts',
      'routers/src/kernel/principals.ts kernel-no-transport @trpc/server',
    ]);
  });

  it("keeps resources below the surfaces and the procedure files, except a resource's router.ts", () => {
    expect(lines(violations.filter((v) => v.from.startsWith('routers/src/widgets/') && v.rule !== 'no-cycle'))).toEqual(
      [
        'routers/src/widgets/service.ts resource-no-procedure-layer routers/src/trpc.ts',
        'routers/src/widgets/service.ts resource-no-surface routers/src/admin/router.ts',
      ],
    );
  });

  it('finds every import ring once, type imports and .tsx files included, and prints its path', () => {
    const rings = violations.filter((v) => v.rule === 'no-cycle');
    expect(lines(rings)).toEqual(['routers/src/widgets/parts.ts no-cycle ring', 'web/src/main.tsx no-cycle ring']);
    const printed = formatViolations(rings, comments);
    expect(printed).toContain(
      'routers/src/widgets/parts.ts\n  no-cycle: ring\n      routers/src/widgets/parts.ts\n      -> routers/src/widgets/whole.ts\n      -> routers/src/widgets/parts.ts',
    );
    expect(printed).toContain('rules:\n  no-cycle: an import ring');
  });

  it("lets only trpc-adapter.ts touch tRPC's internals, and only pipeline.ts run the limits' steps", () => {
    const structure = violations.filter((v) => v.rule === 'trpc-internals' || v.rule === 'one-pipeline');
    expect(structure.map((v) => `${v.from} ${v.rule} ${v.to} ${v.detail}`).sort()).toEqual([
      'rest-facade/src/openapi.ts trpc-internals ._def (lines 1, 2)',
      'rest-facade/src/pipeline/graphql.ts one-pipeline limits.turn (line 2)',
    ]);
  });

  it("gives every table an owner, and lets only its owner's store.ts files name it, by import or in SQL text", () => {
    const owners = violations.filter((v) => v.rule === 'table-owner');
    expect(owners.map((v) => `${v.from} ${v.to} ${v.detail}`).sort()).toEqual([
      'db/src/schema/gadgets.ts spares (no `@owner routers/src/<folder>` before its pgTable)',
      'routers/src/sprockets/count.ts gadgets (names gadgets in SQL; owner routers/src/gadgets/store.ts)',
      'routers/src/sprockets/store.ts gadgets (imports gadgets; owner routers/src/gadgets/store.ts)',
    ]);
    expect(formatViolations(owners, comments)).toContain('rules:\n  table-owner: a table belongs to one store');
  });

  it('reports nothing else', () => {
    const known = ['kernel-', 'resource-no-', 'no-cycle', 'trpc-internals', 'one-pipeline', 'table-owner'];
    expect(lines(violations.filter((v) => !known.some((rule) => v.rule.startsWith(rule))))).toEqual([]);
  });
});
