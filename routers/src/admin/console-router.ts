import { z } from 'zod';
import { ListAuditLogEventsInput } from '../audit-logs/schemas.ts';
import { listAuditLogEvents } from '../audit-logs/service.ts';
import { getLogStream } from '../audit-logs/streams/service.ts';
import { ListParams } from '../common/schemas.ts';
import { ListInvitationsInput, SendInvitationInput } from '../invitations/schemas.ts';
import { listInvitations, revokeInvitation, sendInvitation } from '../invitations/service.ts';
import {
  CreateOrganizationMembershipInput,
  ListOrganizationMembershipsInput,
} from '../organization-memberships/schemas.ts';
import { createOrganizationMembership, listOrganizationMemberships } from '../organization-memberships/service.ts';
import { CreateOrganizationInput } from '../organizations/schemas.ts';
import { createOrganization, deleteOrganization } from '../organizations/service.ts';
import { adminProcedure, router } from '../trpc.ts';
import { CreateUserInput, ListUsersInput } from '../users/schemas.ts';
import { createUser, listUsers } from '../users/service.ts';
import { adminScope, consoleEvents, searchConsoleOrganizations } from './service.ts';

const EnvironmentRef = z.string().min(1).max(128);
const Id = z.string().min(1).max(128);
const InEnvironment = z.object({ environment: EnvironmentRef });

/**
 * The admin procedures the operator console reads and writes an environment's data with. Each
 * calls the same service as the API-key surface, in a Scope whose events carry the actor `admin`.
 */
export const consoleRouters = {
  organizations: router({
    /** Search by name (a substring), external id, id or domain; the newest 50 when `query` is empty. */
    search: adminProcedure
      .input(InEnvironment.extend({ query: z.string().max(256).optional() }))
      .query(async ({ ctx, input }) =>
        searchConsoleOrganizations(await adminScope(ctx.deps, input.environment), input.query),
      ),
    create: adminProcedure
      .input(CreateOrganizationInput.extend({ environment: EnvironmentRef }))
      .mutation(async ({ ctx, input }) => createOrganization(await adminScope(ctx.deps, input.environment), input)),
    delete: adminProcedure.input(InEnvironment.extend({ id: Id })).mutation(async ({ ctx, input }) => {
      await deleteOrganization(await adminScope(ctx.deps, input.environment), input.id);
      return { id: input.id, deleted: true };
    }),
  }),
  users: router({
    list: adminProcedure
      .input(ListUsersInput.extend({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listUsers(await adminScope(ctx.deps, input.environment), input)),
    create: adminProcedure
      .input(CreateUserInput.extend({ environment: EnvironmentRef }))
      .mutation(async ({ ctx, input }) => createUser(await adminScope(ctx.deps, input.environment), input)),
  }),
  auditLogs: router({
    /** An organization's audit log events, newest recorded first (one page), optionally of one action. */
    list: adminProcedure
      .input(ListAuditLogEventsInput.extend({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listAuditLogEvents(await adminScope(ctx.deps, input.environment), input)),
    /** The organization's log stream (type, state, last error; never a secret), or null: read-only. */
    stream: adminProcedure
      .input(z.object({ environment: EnvironmentRef, organization_id: Id }))
      .query(async ({ ctx, input }) =>
        getLogStream(await adminScope(ctx.deps, input.environment), input.organization_id),
      ),
  }),
  memberships: router({
    list: adminProcedure
      .input(ListOrganizationMembershipsInput.extend({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) =>
        listOrganizationMemberships(await adminScope(ctx.deps, input.environment), input),
      ),
    create: adminProcedure
      .input(CreateOrganizationMembershipInput.extend({ environment: EnvironmentRef }))
      .mutation(async ({ ctx, input }) =>
        createOrganizationMembership(await adminScope(ctx.deps, input.environment), input),
      ),
  }),
  invitations: router({
    list: adminProcedure
      .input(ListInvitationsInput.extend({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listInvitations(await adminScope(ctx.deps, input.environment), input)),
    send: adminProcedure
      .input(SendInvitationInput.extend({ environment: EnvironmentRef }))
      .mutation(
        async ({ ctx, input }) =>
          (await sendInvitation(await adminScope(ctx.deps, input.environment), input)).invitation,
      ),
    revoke: adminProcedure
      .input(InEnvironment.extend({ id: Id }))
      .mutation(async ({ ctx, input }) => revokeInvitation(await adminScope(ctx.deps, input.environment), input.id)),
  }),
  events: router({
    /** The event stream with each event's actor and reason, newest first. */
    list: adminProcedure
      .input(
        ListParams.extend({
          environment: EnvironmentRef,
          organization_id: Id.optional(),
          events: z.array(z.string().max(128)).max(50).optional(),
        }),
      )
      .query(async ({ ctx, input }) => consoleEvents(await adminScope(ctx.deps, input.environment), input)),
  }),
};
