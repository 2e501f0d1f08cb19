import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  CreateItContactInput,
  InviteItContactInput,
  ItContact,
  ItContactList,
  ItContactPathInput,
  ListItContactsInput,
} from './schemas.ts';
import { createItContact, deleteItContact, inviteItContact, listItContacts, revokeItContact } from './service.ts';

const tags = ['IT contacts'];
const base = '/organizations/{organization_id}/it_contacts';
const one = `${base}/{contact_id}`;

export const itContactsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: "List an organization's IT contacts" } })
    .input(ListItContactsInput)
    .output(ItContactList)
    .query(({ ctx, input }) => listItContacts(ctx.scope, input)),

  create: apiProcedure
    .meta({ openapi: { method: 'POST', path: base, tags, summary: 'Add an IT contact' }, successStatus: 201 })
    .input(CreateItContactInput)
    .output(ItContact)
    .mutation(({ ctx, input }) => createItContact(ctx.scope, input)),

  delete: apiProcedure
    .meta({ openapi: { method: 'DELETE', path: one, tags, summary: 'Remove an IT contact' }, successStatus: 204 })
    .input(ItContactPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteItContact(ctx.scope, input.organization_id, input.contact_id)),

  invite: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/invite`,
        tags,
        summary: 'Give an IT contact the Admin Portal invitation',
      },
      successStatus: 204,
    })
    .input(InviteItContactInput)
    .output(z.void())
    .mutation(({ ctx, input }) => inviteItContact(ctx.scope, input)),

  revoke: apiProcedure
    .meta({
      openapi: { method: 'POST', path: `${one}/revoke`, tags, summary: "Revoke an IT contact's invitation" },
      successStatus: 204,
    })
    .input(ItContactPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => revokeItContact(ctx.scope, input.organization_id, input.contact_id)),
});
