#!/usr/bin/env node
// The layering check of `npm run lint`: dependency-cruiser with the rules of
// .dependency-cruiser.cjs, plus what it cannot see:
// - sql-outside-store: named imports of @atrium/db tables and query helpers outside store.ts
//   files (types, `newId` and the enum constants stay importable everywhere);
// - resource-cycle: an import cycle between folders of routers/src;
// - import-by-name: another package imported by a relative path instead of its name;
// - undeclared-workspace: a workspace imported but not declared in the importer's package.json.
// Prints the violations grouped by file and exits 1 if any is not in scripts/layering-allowlist.txt
// (`--all` prints the allow-listed ones too; `--allowlist` prints every violation in that file's format).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import ts from 'typescript';

process.chdir(join(dirname(fileURLToPath(import.meta.url)), '..'));
const PACKAGES = {
  db: '@atrium/db',
  routers: '@atrium/routers',
  'rest-facade': '@atrium/rest-facade',
  server: '@atrium/server',
};
const SCANNED = ['db', 'routers', 'rest-facade', 'server', 'tests', 'bench'];
const SQL_FREE = /^(routers|rest-facade|server)\//;
const STORE = /(^|\/)store\.ts$/;
const ALLOWLIST = 'scripts/layering-allowlist.txt';
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
const comments = new Map([
  [
    'resource-cycle',
    'folders of routers/src import each other: move the shared part into one of them, or its own module',
  ],
  [
    'sql-outside-store',
    'drizzle-orm, @atrium/db tables and its query helpers are for store.ts files (`import type` is fine)',
  ],
  ['import-by-name', 'another package is imported by its name (`@atrium/x`), not by a relative path'],
  ['undeclared-workspace', 'declare the workspace in the importing package.json\'s dependencies ("@atrium/x": "*")'],
]);

const violations = [];
/** Records a violation once; `to` is what the allow-list names, `detail` is only printed. */
function report(from, rule, to, detail = '') {
  if (violations.some((v) => v.from === from && v.rule === rule && v.to === to)) return;
  violations.push({ from, rule, to, detail });
}

/** Runs dependency-cruiser with the config's rules, records its violations, returns its modules. */
async function cruiseModules() {
  const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
  const { output } = await cruise(SCANNED, { ...options, outputType: 'json' }, {}, {});
  const result = typeof output === 'string' ? JSON.parse(output) : output;
  for (const rule of options.ruleSet.forbidden) if (!comments.has(rule.name)) comments.set(rule.name, rule.comment);
  const specifiers = new Map(
    result.modules.flatMap((m) => m.dependencies.map((d) => [`${m.source} ${d.resolved}`, d.module])),
  );
  for (const v of result.summary.violations) {
    const to = v.to.startsWith('node_modules/') ? (specifiers.get(`${v.from} ${v.to}`) ?? v.to) : v.to;
    report(v.from, v.rule.name, to);
  }
  return result.modules.filter((m) => !m.source.startsWith('node_modules/'));
}

/** Names exported by db/src/schema/** other than UPPER_CASE constants: tables, relations, column builders. */
function schemaValueNames() {
  const names = new Set(DB_QUERY_HELPERS);
  for (const file of ts.sys.readDirectory('db/src/schema', ['.ts'])) {
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
function valueImports(file, specifier) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
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
function checkDbImports(modules) {
  const forbidden = schemaValueNames();
  for (const m of modules) {
    if (!SQL_FREE.test(m.source) || STORE.test(m.source)) continue;
    for (const d of m.dependencies) {
      if (d.resolved !== 'db/src/index.ts') continue;
      const hits = valueImports(m.source, d.module).filter((name) => name === '*' || forbidden.has(name));
      if (hits.length > 0) report(m.source, 'sql-outside-store', d.module, `{ ${[...new Set(hits)].join(', ')} }`);
    }
  }
}

/** The workspace a path belongs to; `.` (the root package) for bench/ and the root's files. */
function packageOf(path) {
  const top = path.split('/')[0];
  return top in PACKAGES || top === 'tests' ? top : '.';
}

/** Another package's entry reached by a relative path, and workspaces imported without being declared. */
function checkPackageImports(modules) {
  const declared = new Map();
  const depsOf = (pkg) => {
    if (!declared.has(pkg)) {
      const json = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
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
      if (d.module.startsWith('.') && d.resolved === `${to}/src/index.ts`)
        report(m.source, 'import-by-name', d.resolved);
      if (!depsOf(from).has(PACKAGES[to])) report(m.source, 'undeclared-workspace', PACKAGES[to]);
    }
  }
}

/** Import cycles between the folders of routers/src: the strongly connected parts of their graph. */
function checkResourceCycles(modules) {
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

const keyOf = (v) => `${v.from} ${v.rule} ${v.to}`;

function readAllowlist() {
  if (!existsSync(ALLOWLIST)) return new Set();
  const lines = readFileSync(ALLOWLIST, 'utf8').split('\n');
  return new Set(lines.map((l) => l.replace(/#.*/, '').trim()).filter(Boolean));
}

/** The violations grouped by file, then what each broken rule asks. */
function print(list) {
  const byFile = new Map();
  for (const v of list) byFile.set(v.from, [...(byFile.get(v.from) ?? []), v]);
  for (const [file, found] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(file);
    for (const v of found) console.log(`  ${v.rule}: ${v.to} ${v.detail}`.trimEnd());
  }
  const rules = [...new Set(list.map((v) => v.rule))].sort();
  if (rules.length > 0) console.log(`\nrules:\n${rules.map((r) => `  ${r}: ${comments.get(r)}`).join('\n')}\n`);
}

async function main() {
  const started = Date.now();
  const modules = await cruiseModules();
  checkDbImports(modules);
  checkPackageImports(modules);
  checkResourceCycles(modules);
  if (process.argv.includes('--allowlist')) {
    for (const key of [...new Set(violations.map(keyOf))].sort()) console.log(key);
    return;
  }
  const allowed = readAllowlist();
  const failing = violations.filter((v) => !allowed.has(keyOf(v)));
  print(process.argv.includes('--all') ? violations : failing);
  const current = new Set(violations.map(keyOf));
  for (const key of allowed) if (!current.has(key)) console.log(`${ALLOWLIST}: fixed, remove the line: ${key}`);
  const files = new Set(failing.map((v) => v.from)).size;
  const listed = violations.length - failing.length;
  console.log(
    `layering: ${modules.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
      `${failing.length} violations in ${files} files${listed > 0 ? ` (and ${listed} allow-listed)` : ''}`,
  );
  process.exitCode = failing.length > 0 ? 1 : 0;
}

await main();
