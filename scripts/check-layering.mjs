#!/usr/bin/env node
// The layering check of `npm run lint`: dependency-cruiser with the rules of
// .dependency-cruiser.cjs (package direction, no import ring, kernel < resources < surfaces), plus
// what it cannot see:
// - sql-outside-store: named imports of @atrium/db tables and query helpers outside store.ts
//   files (types, `newId` and the enum constants stay importable everywhere);
// - resource-cycle: an import cycle between folders of routers/src;
// - table-owner: every table's schema declaration carries `@owner routers/src/<folder>` (a folder
//   with a store.ts), and the table is not named (a value import of it from @atrium/db, or its SQL
//   name in a `sql` template or `sql.raw` string; a qualified column of that name, `p.groups`, is
//   not it) outside the store.ts files of that folder: other resources call the owner's store;
// - import-by-name: another package imported by a relative path instead of its name;
// - undeclared-workspace: a workspace imported but not declared in the importer's package.json;
// - trpc-internals: tRPC's internals (`@trpc/server/unstable-core-do-not-import`, a `_def` read)
//   outside routers/src/trpc-adapter.ts;
// - one-pipeline: the limits' steps (`limits.identify`, `.count`, `.turn`) called outside the one
//   pipeline definition, rest-facade/src/pipeline/pipeline.ts.
// Prints the violations grouped by file, then what each broken rule asks, and exits 1 if there is
// any. There is no allow-list: a rule that does not hold is fixed, or changed here on purpose.
// `checkLayering({ root })` runs the same checks on another tree (tests/src/tooling/layering.test.ts).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import ts from 'typescript';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = join(REPO, '.dependency-cruiser.cjs');
const PACKAGES = {
  db: '@atrium/db',
  routers: '@atrium/routers',
  'rest-facade': '@atrium/rest-facade',
  server: '@atrium/server',
  web: '@atrium/web',
};
/** Where each package's entry point is (what `@atrium/x` resolves to). */
const ENTRIES = new Set(['db', 'routers', 'rest-facade', 'server'].map((p) => `${p}/src/index.ts`));
for (const p of ['web']) ENTRIES.add(`${p}/build.mjs`);
/** Every folder with code; those missing in a tree are skipped. */
const SCANNED = ['db', 'routers', 'rest-facade', 'server', 'web', 'tests', 'bench'];
const SQL_FREE = /^(routers|rest-facade|server)\//;
const STORE = /(^|\/)store\.ts$/;
/** The one module that may touch tRPC's internals; the patch's own tests exercise the patched internals. */
const TRPC_ADAPTER = 'routers/src/trpc-adapter.ts';
const TRPC_INTERNALS_EXEMPT = /^tests\/src\/patches\//;
const TRPC_INTERNALS = '@trpc/server/unstable-core-do-not-import';
/** The one pipeline definition, and the limits whose steps only it calls. */
const PIPELINE = 'rest-facade/src/pipeline/pipeline.ts';
const LIMITS = 'rest-facade/src/pipeline/limits.ts';
const LIMIT_STEPS = new Set(['identify', 'count', 'turn']);
/** Value exports of @atrium/db that take tables or SQL: they belong in stores, like the tables. */
const DB_QUERY_HELPERS = [
  'schema',
  'paginate',
  'keysetCondition',
  'rawRows',
  'renderedOnce',
  'perHandle',
  'equalsLiteral',
  'claimRoundRobin',
  'environmentsWith',
];
const COMMENTS = new Map([
  [
    'resource-cycle',
    'folders of routers/src import each other: move the shared part into one of them, or its own module',
  ],
  [
    'table-owner',
    "a table belongs to one store (its `@owner` in db/src/schema): ask that store's functions, or take a SQL fragment it builds",
  ],
  [
    'sql-outside-store',
    'drizzle-orm, @atrium/db tables and its query helpers are for store.ts files (`import type` is fine)',
  ],
  ['import-by-name', 'another package is imported by its name (`@atrium/x`), not by a relative path'],
  ['undeclared-workspace', 'declare the workspace in the importing package.json\'s dependencies ("@atrium/x": "*")'],
  [
    'trpc-internals',
    `only ${TRPC_ADAPTER} reads \`_def\` or imports ${TRPC_INTERNALS}: call its plain functions (procedureEntries, callProcedure, ...)`,
  ],
  [
    'one-pipeline',
    `the limits' steps (identify, count, turn) run in one place, ${PIPELINE}: a transport is a codec over that pipeline`,
  ],
]);

/**
 * Runs every check on the tree at `root` (default: this repository) with this repository's
 * rules; returns the violations (`from` file, `rule`, `to`, printed `detail`) and the files seen.
 */
export async function checkLayering({ root = REPO, cache = true } = {}) {
  const violations = [];
  const comments = new Map(COMMENTS);
  const report = (from, rule, to, detail = '') => {
    if (violations.some((v) => v.from === from && v.rule === rule && v.to === to)) return;
    violations.push({ from, rule, to, detail });
  };
  const read = (path) => readFileSync(join(root, path), 'utf8');
  const sources = new Map();
  /** A file's syntax tree (TSX where the name says so), parsed once. */
  const parse = (path) => {
    if (!sources.has(path)) {
      const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : undefined;
      sources.set(path, ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true, kind));
    }
    return sources.get(path);
  };

  const modules = await cruiseModules(root, cache, report, comments);
  checkDbImports(root, modules, parse, report);
  checkTableOwners(root, modules, parse, report);
  checkPackageImports(root, modules, report);
  checkResourceCycles(modules, report);
  checkStructure(modules, parse, report);
  return { violations, files: modules.length, comments };
}

/** Runs dependency-cruiser with the config's rules, records its violations, returns its modules. */
async function cruiseModules(root, cache, report, comments) {
  const options = await extractDepcruiseOptions(CONFIG);
  const scanned = SCANNED.filter((dir) => existsSync(join(root, dir)));
  // The cache lives in this repository's node_modules whatever the working directory.
  const cacheOption = cache && options.cache ? { ...options.cache, folder: join(REPO, options.cache.folder) } : false;
  const cruiseOptions = { ...options, baseDir: resolve(root), outputType: 'json', cache: cacheOption };
  const { output } = await cruise(scanned, cruiseOptions, {}, {});
  const result = typeof output === 'string' ? JSON.parse(output) : output;
  for (const rule of options.ruleSet.forbidden) if (!comments.has(rule.name)) comments.set(rule.name, rule.comment);
  const specifiers = new Map(
    result.modules.flatMap((m) => m.dependencies.map((d) => [`${m.source} ${d.resolved}`, d.module])),
  );
  for (const v of result.summary.violations) {
    if (v.cycle) {
      // A ring is reported once per member: name it once, by its members from the lowest.
      const ring = [v.from, ...v.cycle.map((step) => step.name ?? step)];
      ring.pop();
      const start = ring.indexOf([...ring].sort()[0]);
      const ordered = [...ring.slice(start), ...ring.slice(0, start)];
      report(ordered[0], v.rule.name, 'ring', `\n      ${[...ordered, ordered[0]].join('\n      -> ')}`);
      continue;
    }
    const to = /(^|\/)node_modules\//.test(v.to) ? (specifiers.get(`${v.from} ${v.to}`) ?? v.to) : v.to;
    report(v.from, v.rule.name, to);
  }
  return result.modules.filter((m) => !/(^|\/)node_modules\//.test(m.source) && !m.coreModule);
}

/** Names exported by db/src/schema/** other than UPPER_CASE constants: tables, relations, column builders. */
function schemaValueNames(root) {
  const names = new Set(DB_QUERY_HELPERS);
  const dir = join(root, 'db/src/schema');
  if (!existsSync(dir)) return names;
  for (const file of ts.sys.readDirectory(dir, ['.ts'])) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      if (!statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      for (const d of statement.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && !/^[A-Z][A-Z0-9_]*$/.test(d.name.text)) names.add(d.name.text);
      }
    }
  }
  return names;
}

/** The value names a file imports or re-exports from `specifier` (type-only ones left out); `*` for a namespace. */
function valueImports(source, specifier) {
  const names = [];
  for (const s of source.statements) {
    if (!(ts.isImportDeclaration(s) || ts.isExportDeclaration(s))) continue;
    if (!s.moduleSpecifier || !ts.isStringLiteral(s.moduleSpecifier) || s.moduleSpecifier.text !== specifier) continue;
    const clause = ts.isImportDeclaration(s) ? s.importClause : s;
    if (!clause || clause.isTypeOnly) continue;
    const bindings = ts.isImportDeclaration(s) ? clause.namedBindings : s.exportClause;
    if (!bindings || ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings)) {
      names.push('*');
      continue;
    }
    for (const e of bindings.elements) if (!e.isTypeOnly) names.push((e.propertyName ?? e.name).text);
  }
  return names;
}

/** Tables and query helpers of @atrium/db imported (as values) outside store.ts files. */
function checkDbImports(root, modules, parse, report) {
  const forbidden = schemaValueNames(root);
  for (const m of modules) {
    if (!SQL_FREE.test(m.source) || STORE.test(m.source)) continue;
    for (const d of m.dependencies) {
      if (d.resolved !== 'db/src/index.ts') continue;
      const hits = valueImports(parse(m.source), d.module).filter((name) => name === '*' || forbidden.has(name));
      if (hits.length > 0) report(m.source, 'sql-outside-store', d.module, `{ ${[...new Set(hits)].join(', ')} }`);
    }
  }
}

/**
 * The tables of db/src/schema (`export const x = pgTable('name', ...)`): their export name, SQL
 * name, schema file and owner (`@owner routers/src/<folder>` in the comment before it, if any).
 */
export function tableOwners(root) {
  const tables = [];
  const dir = join(root, 'db/src/schema');
  if (!existsSync(dir)) return tables;
  for (const file of ts.sys.readDirectory(dir, ['.ts'])) {
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      const comments = ts.getLeadingCommentRanges(text, statement.pos) ?? [];
      const owner = comments
        .map((c) => /@owner\s+(routers\/src\/[\w/-]+?)\/?(\s|\*|$)/.exec(text.slice(c.pos, c.end)))
        .find(Boolean)?.[1];
      for (const d of statement.declarationList.declarations) {
        const call = d.initializer;
        if (!ts.isIdentifier(d.name) || !call || !ts.isCallExpression(call)) continue;
        const [name] = call.arguments;
        if (call.expression.getText(source) !== 'pgTable' || !name || !ts.isStringLiteralLike(name)) continue;
        tables.push({ exported: d.name.text, sql: name.text, owner, file: relative(root, file) });
      }
    }
  }
  return tables;
}

/** The SQL text a file writes: its `sql`-tagged templates (static parts) and `sql.raw` strings. */
function sqlTexts(source) {
  const texts = [];
  const visit = (node) => {
    if (ts.isTaggedTemplateExpression(node) && /(^|\.)sql$/.test(node.tag.getText(source))) {
      const t = node.template;
      texts.push(
        ts.isNoSubstitutionTemplateLiteral(t)
          ? t.text
          : [t.head.text, ...t.templateSpans.map((x) => x.literal.text)].join(' '),
      );
    }
    if (ts.isCallExpression(node) && /(^|\.)sql\.raw$/.test(node.expression.getText(source))) {
      for (const a of node.arguments) if (ts.isStringLiteralLike(a)) texts.push(a.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return texts;
}

/**
 * Every table has an owner whose folder has a store.ts, and no table is named (imported as a
 * value, or in SQL text) outside its owner's store.ts files.
 */
function checkTableOwners(root, modules, parse, report) {
  const tables = tableOwners(root);
  for (const t of tables) {
    if (!t.owner) report(t.file, 'table-owner', t.sql, '(no `@owner routers/src/<folder>` before its pgTable)');
    else if (!existsSync(join(root, t.owner, 'store.ts')))
      report(t.file, 'table-owner', t.sql, `(${t.owner}/store.ts does not exist)`);
  }
  const owned = tables.filter((t) => t.owner);
  if (owned.length === 0) return;
  for (const m of modules) {
    if (!SQL_FREE.test(m.source) || !/\.(ts|tsx|mts)$/.test(m.source) || m.source.endsWith('.d.ts')) continue;
    const mine = (t) => STORE.test(m.source) && m.source.startsWith(`${t.owner}/`);
    const others = owned.filter((t) => !mine(t));
    if (others.length === 0) continue;
    const source = parse(m.source);
    const imported = new Set(valueImports(source, '@atrium/db'));
    const texts = sqlTexts(source);
    for (const t of others) {
      const how = [
        imported.has(t.exported) || imported.has('*') ? `imports ${t.exported}` : '',
        texts.some((x) => new RegExp(`(?<!\\.)\\b${t.sql}\\b`).test(x)) ? `names ${t.sql} in SQL` : '',
      ].filter(Boolean);
      if (how.length > 0) report(m.source, 'table-owner', t.sql, `(${how.join(', ')}; owner ${t.owner}/store.ts)`);
    }
  }
}

/** The workspace a path belongs to; `.` (the root package) for bench/ and the root's files. */
function packageOf(path) {
  const top = path.split('/')[0];
  return top in PACKAGES || top === 'tests' ? top : '.';
}

/** Another package's entry reached by a relative path, and workspaces imported without being declared. */
function checkPackageImports(root, modules, report) {
  const declared = new Map();
  const depsOf = (pkg) => {
    if (!declared.has(pkg)) {
      const file = join(root, pkg, 'package.json');
      const json = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
      declared.set(pkg, new Set(Object.keys({ ...json.dependencies, ...json.devDependencies })));
    }
    return declared.get(pkg);
  };
  for (const m of modules) {
    const from = packageOf(m.source);
    for (const d of m.dependencies) {
      const to = packageOf(d.resolved);
      if (!(to in PACKAGES) || to === from) continue;
      // A relative import of another package's other files is dependency-cruiser's entry-point-only.
      if (d.module.startsWith('.') && ENTRIES.has(d.resolved)) report(m.source, 'import-by-name', d.resolved);
      if (!depsOf(from).has(PACKAGES[to])) report(m.source, 'undeclared-workspace', PACKAGES[to]);
    }
  }
}

/** Import cycles between the folders of routers/src: the strongly connected parts of their graph. */
function checkResourceCycles(modules, report) {
  const folderOf = (path) => /^routers\/src\/([^/]+)\//.exec(path)?.[1];
  const edges = new Map();
  for (const m of modules) {
    const from = folderOf(m.source);
    for (const d of m.dependencies) {
      const to = folderOf(d.resolved);
      if (!from || !to || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      edges.get(from).set(to, [...(edges.get(from).get(to) ?? []), `${m.source} -> ${d.resolved}`]);
    }
  }
  for (const component of stronglyConnected(edges)) {
    const inside = new Set(component);
    const via = component.flatMap((f) =>
      [...(edges.get(f) ?? [])].filter(([to]) => inside.has(to)).flatMap(([, x]) => x),
    );
    report(`routers/src/{${component.join(',')}}`, 'resource-cycle', 'cycle', `through\n      ${via.join('\n      ')}`);
  }
}

/** Tarjan's algorithm: the components of more than one node, each sorted. */
function stronglyConnected(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const components = [];
  const visit = (node) => {
    index.set(node, index.size);
    low.set(node, index.get(node));
    stack.push(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node), index.get(next)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let top;
    do {
      top = stack.pop();
      component.push(top);
    } while (top !== node);
    if (component.length > 1) components.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return components;
}

/** `a.b.c` -> `c`; the name a call's receiver ends with, if it is a plain name or property. */
function lastName(expression) {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return expression.name.text;
  return undefined;
}

/**
 * The structure rules, read from each file's syntax tree: tRPC internals only in the adapter
 * (an import of `unstable-core-do-not-import`, a `._def` / `['_def']` read, a `{ _def }`
 * destructuring); the limits' steps only in the pipeline definition (a call of `identify`,
 * `count` or `turn` on a receiver named `limits`, or such a method taken off it).
 */
function checkStructure(modules, parse, report) {
  const lines = new Map();
  const found = (file, rule, what, node) => {
    const key = `${file}\0${rule}\0${what}`;
    const line = node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1;
    lines.set(key, [...(lines.get(key) ?? []), line]);
  };
  for (const m of modules) {
    if (!/\.(ts|tsx|mts|mjs|js)$/.test(m.source) || m.source.endsWith('.d.ts')) continue;
    const internals = m.source !== TRPC_ADAPTER && !TRPC_INTERNALS_EXEMPT.test(m.source);
    const limits = m.source !== PIPELINE && m.source !== LIMITS;
    const source = parse(m.source);
    const visit = (node) => {
      if (internals) {
        const specifier =
          (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
            ? node.moduleSpecifier
            : ts.isCallExpression(node) && node.arguments.length === 1 && isImportOrRequire(node)
              ? node.arguments[0]
              : undefined;
        if (specifier && ts.isStringLiteralLike(specifier) && specifier.text.startsWith(TRPC_INTERNALS)) {
          found(m.source, 'trpc-internals', specifier.text, node);
        }
        const readsDef =
          (ts.isPropertyAccessExpression(node) && node.name.text === '_def') ||
          (ts.isElementAccessExpression(node) &&
            ts.isStringLiteralLike(node.argumentExpression) &&
            node.argumentExpression.text === '_def') ||
          (ts.isBindingElement(node) && (node.propertyName ?? node.name).getText(source) === '_def');
        if (readsDef) found(m.source, 'trpc-internals', '._def', node);
      }
      if (limits) {
        const taken =
          ts.isPropertyAccessExpression(node) &&
          LIMIT_STEPS.has(node.name.text) &&
          /^limits$/i.test(lastName(node.expression) ?? '');
        const destructured =
          ts.isVariableDeclaration(node) &&
          ts.isObjectBindingPattern(node.name) &&
          node.initializer &&
          /^limits$/i.test(lastName(node.initializer) ?? '') &&
          node.name.elements.some((e) => LIMIT_STEPS.has((e.propertyName ?? e.name).getText(source)));
        if (taken || destructured) {
          found(m.source, 'one-pipeline', `limits.${taken ? node.name.text : '{identify,count,turn}'}`, node);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  for (const [key, at] of lines) {
    const [file, rule, what] = key.split('\0');
    report(file, rule, what, `(line${at.length > 1 ? 's' : ''} ${[...new Set(at)].join(', ')})`);
  }
}

const isImportOrRequire = (call) =>
  call.expression.kind === ts.SyntaxKind.ImportKeyword ||
  (ts.isIdentifier(call.expression) && call.expression.text === 'require');

/** The violations grouped by file, then what each broken rule asks. */
export function formatViolations(list, comments) {
  const lines = [];
  const byFile = new Map();
  for (const v of list) byFile.set(v.from, [...(byFile.get(v.from) ?? []), v]);
  for (const [file, found] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(file);
    for (const v of found)
      lines.push(`  ${v.rule}: ${v.to}${v.detail && !v.detail.startsWith('\n') ? ' ' : ''}${v.detail}`);
  }
  const rules = [...new Set(list.map((v) => v.rule))].sort();
  if (rules.length > 0) lines.push('', 'rules:', ...rules.map((r) => `  ${r}: ${comments.get(r)}`), '');
  return lines.join('\n');
}

async function main() {
  const started = Date.now();
  const { violations, files, comments } = await checkLayering();
  if (violations.length > 0) console.log(formatViolations(violations, comments));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const where = new Set(violations.map((v) => v.from)).size;
  console.log(`layering: ${files} files in ${seconds} s, ${violations.length} violations in ${where} files`);
  process.exitCode = violations.length > 0 ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
