import { auditLogEvents } from '@atrium/db';
import { BadRequestException, NotFoundException, UnprocessableEntityException } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

// The worker's database is built (and migrated) under the hook's timeout, not the first test's.
beforeAll(() => getWorld());

const storedEvents = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogEvents).where(eq(auditLogEvents.environmentId, env.environmentId));

describe('official SDK: auditLogs', () => {
  it('creates schemas and events, lists schemas, reads and sets retention, unchanged', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });

    const schema = await workos.auditLogs.createSchema({
      action: 'user.signed_in',
      actor: { metadata: { role: 'string' } },
      targets: [{ type: 'team', metadata: { seats: 'number' } }],
      metadata: { paid: 'boolean' },
    });
    expect(schema).toEqual({
      object: 'audit_log_schema',
      version: 1,
      actor: { metadata: { role: 'string' } },
      targets: [{ type: 'team', metadata: { seats: 'number' } }],
      metadata: { paid: 'boolean' },
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // The SDK sends an empty actor schema when none is given: a second version without actor metadata.
    const v2 = await workos.auditLogs.createSchema({ action: 'user.signed_in', targets: [{ type: 'team' }] });
    expect(v2.version).toBe(2);

    const occurredAt = new Date(Date.now() - 1_000);
    await workos.auditLogs.createEvent(
      org.id,
      {
        action: 'user.signed_in',
        occurredAt,
        actor: { id: 'user_1', type: 'user', name: 'Jon', metadata: { role: 'admin' } },
        targets: [{ id: 'team_1', type: 'team', metadata: { seats: 3 } }],
        context: { location: '203.0.113.7', userAgent: 'Chrome/104' },
        metadata: { paid: true },
      },
      { idempotencyKey: 'sdk-audit-1' },
    );
    // A retry with the same key stores nothing more.
    await workos.auditLogs.createEvent(
      org.id,
      {
        action: 'user.signed_in',
        occurredAt,
        actor: { id: 'user_1', type: 'user', name: 'Jon', metadata: { role: 'admin' } },
        targets: [{ id: 'team_1', type: 'team', metadata: { seats: 3 } }],
        context: { location: '203.0.113.7', userAgent: 'Chrome/104' },
        metadata: { paid: true },
      },
      { idempotencyKey: 'sdk-audit-1' },
    );
    // Version 2 takes no actor or event metadata rules, one team target.
    await workos.auditLogs.createEvent(org.id, {
      action: 'user.signed_in',
      version: 2,
      occurredAt,
      actor: { id: 'user_2', type: 'user' },
      targets: [{ id: 'team_2', type: 'team' }],
      context: { location: '203.0.113.8' },
    });
    const rows = await storedEvents(env);
    expect(rows.map((r) => [r.actor.id, r.version, r.context]).sort()).toEqual([
      ['user_1', 1, { location: '203.0.113.7', user_agent: 'Chrome/104' }],
      ['user_2', 2, { location: '203.0.113.8' }],
    ]);

    // A schema violation is a BadRequestException; an unknown organization a NotFoundException.
    await expect(
      workos.auditLogs.createEvent(org.id, {
        action: 'user.signed_in',
        occurredAt,
        actor: { id: 'user_1', type: 'user', metadata: { role: 'admin' } },
        targets: [{ id: 'inv_1', type: 'invoice' }],
        context: { location: '203.0.113.7' },
        metadata: { paid: true },
      }),
    ).rejects.toBeInstanceOf(BadRequestException);
    await expect(
      workos.auditLogs.createEvent('org_01HZZZZZZZZZZZZZZZZZZZZZZZ', {
        action: 'a.b',
        occurredAt,
        actor: { id: 'u', type: 'user' },
        targets: [],
        context: { location: 'x' },
      }),
    ).rejects.toBeInstanceOf(NotFoundException);
    expect(await storedEvents(env)).toHaveLength(2);

    const schemas = await workos.auditLogs.listSchemas('user.signed_in', { order: 'asc' });
    expect(schemas.data.map((s) => s.version)).toEqual([1, 2]);
    expect(schemas.data[0]).toEqual(schema);
    expect((await schemas.autoPagination()).map((s) => s.version)).toEqual([1, 2]);

    expect(await workos.auditLogs.getOrganizationAuditLogsRetention({ id: org.id })).toEqual({
      retentionPeriodInDays: 365,
    });
    expect(
      await workos.auditLogs.updateOrganizationAuditLogsRetention({ id: org.id, retentionPeriod: '6_MONTHS' }),
    ).toEqual({ retentionPeriodInDays: 180 });
    await expect(
      workos.auditLogs.updateOrganizationAuditLogsRetention({ id: org.id, retentionPeriod: '13_MONTHS' as '1_MONTH' }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
    await expect(
      workos.auditLogs.getOrganizationAuditLogsRetention({ id: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
    ).rejects.toBeInstanceOf(NotFoundException);
  });
});
