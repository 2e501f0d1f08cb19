import { z } from 'zod';
import { OrganizationMembershipList } from '../organization-memberships/schemas.ts';
import { featureProcedure, router } from '../trpc.ts';
import {
  CreateGroupInput,
  Group,
  GroupList,
  GroupMembershipInput,
  GroupPathInput,
  ListGroupMembershipsInput,
  ListGroupsInput,
  ListMembershipGroupsInput,
  UpdateGroupInput,
} from './schemas.ts';
import {
  addGroupMembership,
  createGroup,
  deleteGroup,
  getGroup,
  listGroupMemberships,
  listGroups,
  listMembershipGroups,
  removeGroupMembership,
  updateGroup,
} from './service.ts';

const tags = ['Groups'];
const groupsProcedure = featureProcedure('groups');
const base = '/organizations/{organization_id}/groups';
const one = `${base}/{group_id}`;

const membershipsRouter = router({
  list: groupsProcedure
    .meta({
      openapi: { method: 'GET', path: `${one}/organization-memberships`, tags, summary: "List a group's memberships" },
    })
    .input(ListGroupMembershipsInput)
    .output(OrganizationMembershipList)
    .query(({ ctx, input }) => listGroupMemberships(ctx.scope, input)),

  add: groupsProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/organization-memberships`,
        tags,
        summary: 'Add an organization membership to a group (returns the group)',
      },
    })
    .input(GroupMembershipInput)
    .output(Group)
    .mutation(({ ctx, input }) => addGroupMembership(ctx.scope, input)),

  remove: groupsProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${one}/organization-memberships/{organization_membership_id}`,
        tags,
        summary: 'Remove an organization membership from a group',
      },
      successStatus: 204,
    })
    .input(GroupMembershipInput)
    .output(z.void())
    .mutation(({ ctx, input }) => removeGroupMembership(ctx.scope, input)),
});

export const groupsRouter = router({
  list: groupsProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: "List an organization's groups" } })
    .input(ListGroupsInput)
    .output(GroupList)
    .query(({ ctx, input }) => listGroups(ctx.scope, input)),

  create: groupsProcedure
    .meta({ openapi: { method: 'POST', path: base, tags, summary: 'Create a group' }, successStatus: 201 })
    .input(CreateGroupInput)
    .output(Group)
    .mutation(({ ctx, input }) => createGroup(ctx.scope, input)),

  get: groupsProcedure
    .meta({ openapi: { method: 'GET', path: one, tags, summary: 'Get a group' } })
    .input(GroupPathInput)
    .output(Group)
    .query(({ ctx, input }) => getGroup(ctx.scope, input)),

  update: groupsProcedure
    .meta({ openapi: { method: 'PATCH', path: one, tags, summary: 'Update a group' } })
    .input(UpdateGroupInput)
    .output(Group)
    .mutation(({ ctx, input }) => updateGroup(ctx.scope, input)),

  delete: groupsProcedure
    .meta({ openapi: { method: 'DELETE', path: one, tags, summary: 'Delete a group' }, successStatus: 204 })
    .input(GroupPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteGroup(ctx.scope, input)),

  /** The groups of one organization membership (upstream's path; the specification gives none). */
  listForMembership: groupsProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/user_management/organization_memberships/{id}/groups',
        tags,
        summary: "List an organization membership's groups",
      },
    })
    .input(ListMembershipGroupsInput)
    .output(GroupList)
    .query(({ ctx, input }) => listMembershipGroups(ctx.scope, input)),

  memberships: membershipsRouter,
});
