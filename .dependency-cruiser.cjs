// The layering of the workspaces, checked by `npm run lint`: scripts/check-layering.mjs runs
// dependency-cruiser with these rules, then the checks it cannot express (named imports of
// @atrium/db tables outside stores, a table named outside its `@owner`'s store, cycles between
// resource folders of routers/src, relative imports of another package, undeclared workspaces,
// the structure rules).
//
// Packages depend one way only: db <- routers <- rest-facade <- server; the browser apps
// (web/) imports routers' types only; tests/ and bench/ may import any of them. Across
// packages, an import goes through the package's name and entry point. SQL (drizzle-orm, the
// drivers) lives in db/ and in `store.ts` files. No import ring anywhere, type imports included.
//
// Inside routers/src the layers are: kernel < resources < surfaces < procedure files:
// - the kernel (`kernel/`: config, deps, scope, call context, principals, errors) imports nothing
//   else of routers/src and no transport;
// - resources (every other folder, and the top-level modules not listed below) hold the domain:
//   schemas.ts, service.ts, store.ts, and the API surface's procedures beside them in router.ts
//   (STYLE.md's shape). They import no surface folder, no transport, and none of the procedure
//   files, except from their router.ts;
// - surfaces are folders of procedures over resource services, one per audience:
//   `client-api/` (the widgets REST shapes, the typed client tRPC and the GraphQL schema) and
//   `admin/` (the admin tRPC and the operator console's procedures), `scim/` (SCIM 2.0 for the
//   directories' identity providers, served by its own codec). client-api/ still mixes a
//   resource part with its procedures: its areas keep store.ts files with the SQL of their
//   projections (members, sessions, ...); the portal's procedures are portal/router.ts beside its
//   resource (links, sessions), and its pages are rendered in rest-facade/;
// - the procedure files (tRPC init and middlewares, its error mapping, the one adapter of tRPC's
//   internals, the app router, the package's entry) sit on top.

const PACKAGES = ['db', 'routers', 'rest-facade', 'server'];
/** The browser apps: packages whose entry is their build script, importing routers' types only. */
const FRONT_ENDS = ['web'];
const ALL = [...PACKAGES, ...FRONT_ENDS];
const ENTRY = `^((${PACKAGES.join('|')})/src/index\\.ts|(${FRONT_ENDS.join('|')})/build\\.mjs)$`;
const STORE = '(^|/)store\\.ts$';

const KERNEL = '^routers/src/kernel/';
const SURFACES = '^routers/src/(client-api|admin|scim)/';
const PROCEDURE_FILES = '^routers/src/(trpc|trpc-meta|trpc-errors|trpc-adapter|app-router|index)\\.ts$';
/** The wire protocols and their frameworks: codecs and surfaces use them, the layers below never. */
const TRANSPORTS = '(^|/)node_modules/(@trpc/|trpc-to-openapi/|graphql[^/]*/|@pothos/|express/|@types/express/)';

/** One rule per package: nothing to its right in PACKAGES, nor the browser apps, tests/ and bench/. */
const direction = PACKAGES.map((name, i) => ({
  name: 'layer-direction',
  severity: 'error',
  comment:
    'packages depend one way: db <- routers <- rest-facade <- server; web/ imports routers only ' +
    '(tests/ and bench/ may import any)',
  from: { path: `^${name}/` },
  to: { path: `^(${[...PACKAGES.slice(i + 1), ...FRONT_ENDS, 'tests', 'bench'].join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...direction,
    {
      name: 'layer-direction',
      severity: 'error',
      comment:
        'packages depend one way: db <- routers <- rest-facade <- server; web/ imports routers only ' +
        '(tests/ and bench/ may import any)',
      from: { path: `^(${FRONT_ENDS.join('|')})/` },
      to: { path: `^(db|rest-facade|server|tests|bench|${FRONT_ENDS.join('|')})/`, pathNot: '^$1/' },
    },
    {
      name: 'entry-point-only',
      severity: 'error',
      comment: 'another package is imported through its entry point (`@atrium/x`), never its src/ files',
      from: { path: '^([^/]+)/' },
      to: { path: `^(${ALL.join('|')})/`, pathNot: ['^$1/', ENTRY] },
    },
    {
      name: 'entry-point-only',
      severity: 'error',
      comment: 'another package is imported through its entry point (`@atrium/x`), never its src/ files',
      from: {},
      to: { couldNotResolve: true, path: '^@atrium/[^/]+/.' },
    },
    {
      name: 'no-cycle',
      severity: 'error',
      comment:
        'an import ring (type imports count): move what both sides need below them, or pass it in as a parameter',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-below-all',
      severity: 'error',
      comment:
        'routers/src/kernel/ imports only itself, @atrium/db and plain libraries: every other folder is above it',
      from: { path: KERNEL },
      to: { path: '^routers/src/', pathNot: KERNEL },
    },
    {
      name: 'kernel-no-transport',
      severity: 'error',
      comment: 'the kernel knows no transport: no @trpc/*, trpc-to-openapi, graphql*, @pothos/*, express',
      from: { path: KERNEL },
      to: { path: TRANSPORTS },
    },
    {
      name: 'resource-no-surface',
      severity: 'error',
      comment:
        'resources sit below the surfaces: move what a resource needs from client-api/ or admin/ into a resource (or the kernel)',
      from: { path: '^routers/src/', pathNot: [KERNEL, SURFACES, PROCEDURE_FILES] },
      to: { path: SURFACES },
    },
    {
      name: 'resource-no-transport',
      severity: 'error',
      comment:
        'resources know no transport (@trpc/*, trpc-to-openapi, graphql*, @pothos/*, express): procedures reach them through trpc.ts',
      from: { path: '^routers/src/', pathNot: [KERNEL, SURFACES, PROCEDURE_FILES] },
      to: { path: TRANSPORTS },
    },
    {
      name: 'resource-no-procedure-layer',
      severity: 'error',
      comment:
        "only a resource's router.ts imports the procedure files (trpc.ts, trpc-meta.ts, trpc-errors.ts, trpc-adapter.ts, app-router.ts, index.ts)",
      from: { path: '^routers/src/', pathNot: [KERNEL, SURFACES, PROCEDURE_FILES, '/router\\.ts$'] },
      to: { path: PROCEDURE_FILES },
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
    // Data, results, migrations and our build output; a dist/ in node_modules stays (@trpc/server
    // resolves there, and the transport rules must see it).
    exclude: { path: ['(^|/)(\\.atrium|results|migrations)/', '^[^/]+/dist/'] },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
      extensions: ['.ts', '.tsx', '.mjs', '.js', '.cjs', '.d.ts', '.json'],
    },
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
  },
};
