// The layering of the workspaces, checked by `npm run lint`: scripts/check-layering.mjs runs
// dependency-cruiser with these rules, then the checks it cannot express (named imports of
// @atrium/db tables outside stores, cycles between resource folders of routers/src, relative
// imports of another package, undeclared workspaces).
//
// Packages depend one way only: db <- routers <- rest-facade <- server; tests/ and bench/ may
// import any of them. Across packages, an import goes through the package's name and entry point.
// SQL (drizzle-orm, the drivers) lives in db/ and in `store.ts` files.

const PACKAGES = ['db', 'routers', 'rest-facade', 'server'];
const ENTRY = `^(${PACKAGES.join('|')})/src/index\\.ts$`;
const STORE = '(^|/)store\\.ts$';

/** One rule per package: nothing to its right in PACKAGES, nor tests/ and bench/. */
const direction = PACKAGES.map((name, i) => ({
  name: 'layer-direction',
  severity: 'error',
  comment: 'packages depend one way: db <- routers <- rest-facade <- server (tests/ and bench/ may import any)',
  from: { path: `^${name}/` },
  to: { path: `^(${[...PACKAGES.slice(i + 1), 'tests', 'bench'].join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...direction,
    {
      name: 'entry-point-only',
      severity: 'error',
      comment: 'another package is imported through its entry point (`@atrium/x`), never its src/ files',
      from: { path: '^([^/]+)/' },
      to: { path: `^(${PACKAGES.join('|')})/`, pathNot: ['^$1/', ENTRY] },
    },
    {
      name: 'entry-point-only',
      severity: 'error',
      comment: 'another package is imported through its entry point (`@atrium/x`), never its src/ files',
      from: {},
      to: { couldNotResolve: true, path: '^@atrium/[^/]+/.' },
    },
    {
      name: 'sql-outside-store',
      severity: 'error',
      comment: 'drizzle-orm (values and types) is imported only by store.ts files and db/',
      from: { path: '^(routers|rest-facade|server)/', pathNot: STORE },
      to: { path: '^node_modules/drizzle-orm/' },
    },
    {
      name: 'driver-outside-db',
      severity: 'error',
      comment: 'the database drivers are opened by db/ only (tests and bench may use them)',
      from: { path: '^(routers|rest-facade|server)/' },
      to: { path: '^node_modules/(postgres|@electric-sql/pglite)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'an import that does not resolve',
      from: {},
      to: { couldNotResolve: true, pathNot: '^@atrium/[^/]+/.' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(\\.atrium|dist|results|migrations)/' },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
      extensions: ['.ts', '.mjs', '.js', '.cjs', '.d.ts', '.json'],
    },
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
  },
};
