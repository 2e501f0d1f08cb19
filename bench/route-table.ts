// The route step alone, no HTTP: what `redact` + `match` cost per request on the real route
// table (bench/README.md, "Route table (find-my-way)"). Usage: npx tsx bench/route-table.ts [--n 2000000]

import { RouteTable } from '@atrium/rest-facade';
import { appRouter, procedureEntries } from '@atrium/routers';

const n = Number(process.argv[process.argv.indexOf('--n') + 1]) || 2_000_000;
const ID = '01JD5Q7Z8X9Y0A1B2C3D4E5F6G';

/** What arrives: REST reads and writes, widgets, `/trpc`, a page, a wrong verb, an escaped id, a 404. */
export const REQUESTS: Array<[method: string, path: string]> = [
  ['GET', `/organizations/org_${ID}`],
  ['GET', '/organizations'],
  ['POST', '/organizations'],
  ['PUT', `/organizations/org_${ID}`],
  ['GET', '/user_management/organization_memberships'],
  ['GET', `/user_management/organization_memberships/om_${ID}`],
  ['GET', `/organizations/org_${ID}/groups/group_${ID}/organization-memberships`],
  ['DELETE', `/authorization/organizations/org_${ID}/roles/admin/permissions/posts%3Aread`],
  ['GET', '/_widgets/UserManagement/members'],
  ['GET', `/user_management/invitations/by_token/${ID}${ID}`],
  ['GET', '/organizations/external_id/a%2Fb'],
  ['POST', '/trpc/organizations.list'],
  ['GET', '/healthz'],
  ['PATCH', `/organizations/org_${ID}`],
  ['GET', '/no/such/path'],
];

export function measure(table: {
  match(method: string, pathname: string): unknown;
  redact(pathname: string): string;
}): number {
  let sink = 0;
  const run = (count: number) => {
    for (let i = 0; i < count; i++) {
      const [method, path] = REQUESTS[i % REQUESTS.length] as [string, string];
      sink += table.redact(path).length;
      if (table.match(method, path)) sink++;
    }
  };
  run(n / 4); // warm-up: the JIT settles
  // CPU time, not wall time: on a shared machine the wait for a core is not the router's.
  const start = process.cpuUsage();
  run(n);
  const used = process.cpuUsage(start);
  const ns = ((used.user + used.system) * 1000) / n;
  if (sink === 0) throw new Error('nothing matched');
  return ns;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const table = new RouteTable(procedureEntries(appRouter));
  for (let round = 1; round <= 3; round++) {
    console.log(`round ${round}: ${measure(table).toFixed(0)} ns of CPU per request (redact + match), ${n} requests`);
  }
}
