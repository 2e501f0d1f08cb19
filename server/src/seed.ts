import type { AdminClient, Register } from './cli-context.ts';

/**
 * `atrium seed --environment <env>`: demo data to look at in the console and call with the SDK,
 * made through the admin API (the same services as the REST API: its rules, events and stores).
 * Every name is under example.org, which IANA reserves, so no real domain or mailbox is named.
 * Each item is found by its natural key first (an organization by its external id, a user by
 * email, a membership by user and organization), so a second run creates nothing and a run that
 * stopped half-way is completed by the next.
 */
export const DEMO_ORGANIZATIONS = [
  { name: 'Acme Corp', external_id: 'demo-acme', verified: ['acme.example.org'] },
  { name: 'Globex', external_id: 'demo-globex', verified: ['globex.example.org'] },
  // Its domain stays pending until someone publishes its TXT record (or verifies it by hand).
  { name: 'Initech', external_id: 'demo-initech', verified: [], pending: 'initech.example.org' },
] as const;

export const DEMO_USERS = [
  { email: 'alice@acme.example.org', first_name: 'Alice', last_name: 'Archer', roles: { 'demo-acme': 'admin' } },
  { email: 'bob@acme.example.org', first_name: 'Bob', last_name: 'Baker', roles: { 'demo-acme': 'member' } },
  {
    email: 'carol@globex.example.org',
    first_name: 'Carol',
    last_name: 'Chen',
    roles: { 'demo-globex': 'admin', 'demo-acme': 'member' },
  },
  { email: 'dan@initech.example.org', first_name: 'Dan', last_name: 'Diaz', roles: { 'demo-initech': 'admin' } },
] as const;

export interface SeedReport {
  environment: string;
  organizations: {
    id: string;
    name: string;
    external_id: string;
    domains: { domain: string; state: string }[];
    created: boolean;
  }[];
  users: { id: string; email: string; created: boolean }[];
  memberships: { id: string; email: string; organization: string; role: string; created: boolean }[];
}

/** Makes (or finds) the demo organizations, domains, users and memberships in `environment`. */
export async function seedDemo(client: AdminClient, environment: string): Promise<SeedReport> {
  const report: SeedReport = { environment, organizations: [], users: [], memberships: [] };
  const orgIds = new Map<string, { id: string; name: string }>();
  for (const demo of DEMO_ORGANIZATIONS) {
    const found = (await client.organizations.search.query({ environment, query: demo.external_id })).find(
      (org) => org.external_id === demo.external_id,
    );
    let org =
      found ??
      (await client.organizations.create.mutate({
        environment,
        name: demo.name,
        external_id: demo.external_id,
        domain_data: demo.verified.map((domain) => ({ domain, state: 'verified' as const })),
      }));
    const pending = 'pending' in demo ? demo.pending : undefined;
    if (pending && !org.domains.some((d) => d.domain === pending)) {
      await client.domains.create.mutate({ environment, organization_id: org.id, domain: pending });
      org = (await client.organizations.search.query({ environment, query: org.id }))[0] ?? org;
    }
    orgIds.set(demo.external_id, { id: org.id, name: org.name });
    report.organizations.push({
      id: org.id,
      name: org.name,
      external_id: demo.external_id,
      domains: org.domains.map((d) => ({ domain: d.domain, state: d.state })),
      created: found === undefined,
    });
  }
  for (const demo of DEMO_USERS) {
    const found = (await client.users.list.query({ environment, email: demo.email })).data.find(
      (user) => user.email === demo.email,
    );
    const user =
      found ??
      (await client.users.create.mutate({
        environment,
        email: demo.email,
        first_name: demo.first_name,
        last_name: demo.last_name,
        email_verified: true,
      }));
    report.users.push({ id: user.id, email: demo.email, created: found === undefined });
    for (const [externalId, role] of Object.entries(demo.roles)) {
      const org = orgIds.get(externalId) as { id: string; name: string };
      const existing = (await client.memberships.list.query({ environment, user_id: user.id, organization_id: org.id }))
        .data[0];
      const membership =
        existing ??
        (await client.memberships.create.mutate({
          environment,
          user_id: user.id,
          organization_id: org.id,
          role_slug: role,
        }));
      report.memberships.push({
        id: membership.id,
        email: demo.email,
        organization: org.name,
        role: membership.role.slug,
        created: existing === undefined,
      });
    }
  }
  return report;
}

/** A few lines for a person: what there is now, and what this run added. */
function summary(report: SeedReport): string {
  const made = (created: boolean) => (created ? 'created' : 'already there');
  const lines = [`Demo data in environment '${report.environment}':`];
  for (const org of report.organizations) {
    const domains = org.domains.map((d) => `${d.domain} (${d.state})`).join(', ');
    lines.push(`  ${org.name.padEnd(10)} ${org.id}  ${domains}  [${made(org.created)}]`);
  }
  for (const user of report.users) {
    const roles = report.memberships
      .filter((m) => m.email === user.email)
      .map((m) => `${m.role} of ${m.organization}`)
      .join(', ');
    lines.push(`  ${user.email.padEnd(26)} ${user.id}  ${roles}  [${made(user.created)}]`);
  }
  const added = [...report.organizations, ...report.users, ...report.memberships].filter((i) => i.created).length;
  lines.push(added === 0 ? 'Nothing to add: the demo data was already there.' : `Added ${added} items.`);
  return `${lines.join('\n')}\n`;
}

export const registerSeed: Register = (program, ctx) => {
  program
    .command('seed')
    .description(
      'Make demo data in an environment: organizations with domains (one pending), users and their roles; a second run adds nothing',
    )
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; json?: boolean }) => {
      const report = await seedDemo(ctx.client(), options.environment);
      if (options.json) ctx.print(options)(report);
      else ctx.out(summary(report));
    });
};
