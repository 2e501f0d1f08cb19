import { type DbHandle, events, openDb, organizationDomains } from '@atrium/db';
import { type Deps, newCaches } from '@atrium/routers';
import { createTxtResolver, type DevDnsServer, startDevDns, VerificationWorker } from '@atrium/server';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newEnvironment, uniqueDomain } from './helpers/world.ts';

const databaseUrl = inject('databaseUrl');

// PGlite is one in-process connection: two workers on it cannot race. The guarantee under test
// (FOR UPDATE SKIP LOCKED between processes) is PostgreSQL's, so this runs on PostgreSQL only.
describe.skipIf(!databaseUrl)('two verification workers on one PostgreSQL', () => {
  let dns: DevDnsServer;
  let second: DbHandle;
  beforeAll(async () => {
    dns = await startDevDns();
    second = await openDb({ databaseUrl, poolSize: 5 });
  });
  afterAll(async () => {
    await dns.close();
    await second.close();
  });

  it('check each of 200 due domains exactly once and emit no double events', async () => {
    const env = await newEnvironment();
    const names = Array.from({ length: 200 }, () => uniqueDomain('race'));
    for (const chunk of [names.slice(0, 100), names.slice(100)]) {
      await env.caller.organizations.create({
        name: 'Racer',
        domain_data: chunk.map((domain) => ({ domain, state: 'pending' as const })),
      });
    }
    const rows = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, env.environmentId));
    expect(rows).toHaveLength(200);
    // Every other domain publishes its token.
    const matching = new Set<string>();
    rows.forEach((row, i) => {
      const name = `${row.verificationPrefix}.${row.domain}`;
      if (i % 2 === 0) {
        matching.add(row.id);
        dns.set(name, { txt: [row.verificationToken] });
      } else dns.set(name, 'nxdomain');
    });
    const now = new Date();
    await env.deps.db
      .update(organizationDomains)
      .set({ nextCheckAt: now })
      .where(eq(organizationDomains.environmentId, env.environmentId));

    const lookups = new Map<string, number>();
    const real = createTxtResolver([dns.address], 2_000);
    const counting = {
      resolveTxt: (name: string) => {
        lookups.set(name, (lookups.get(name) ?? 0) + 1);
        return real.resolveTxt(name);
      },
    };
    const secondDeps: Deps = { ...env.deps, db: second.db, driver: second.driver, caches: newCaches() };
    const options = { resolver: counting, batchSize: 7, concurrency: 4, environmentId: env.environmentId };
    const a = new VerificationWorker(env.deps, options);
    const b = new VerificationWorker(secondDeps, options);

    let taken = 0;
    for (let round = 0; round < 200; round++) {
      const [x, y] = await Promise.all([a.tick(), b.tick()]);
      taken += x + y;
      if (x + y === 0) break;
    }

    expect(taken).toBe(200);
    expect(lookups.size).toBe(200);
    expect([...lookups.values()].every((n) => n === 1)).toBe(true);
    const after = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, env.environmentId));
    expect(after.every((row) => row.checkAttempts === 1)).toBe(true);
    expect(
      after
        .filter((row) => row.state === 'verified')
        .map((row) => row.id)
        .sort(),
    ).toEqual([...matching].sort());
    const verifiedEvents = await env.deps.db
      .select({ domainId: sql<string>`${events.data}->>'id'` })
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'organization_domain.verified')));
    expect(verifiedEvents).toHaveLength(100);
    expect(new Set(verifiedEvents.map((e) => e.domainId))).toEqual(matching);
  });
});
