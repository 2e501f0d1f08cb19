import { apiProcedure, router } from '../trpc.ts';
import {
  Invitation,
  InvitationIdInput,
  InvitationList,
  InvitationTokenInput,
  ListInvitationsInput,
  ResendInvitationInput,
  SendInvitationInput,
} from './schemas.ts';
import {
  acceptInvitation,
  findInvitationByToken,
  getInvitation,
  listInvitations,
  resendInvitation,
  revokeInvitation,
  sendInvitation,
} from './service.ts';

const tags = ['Invitations'];
const base = '/user_management/invitations';

export const invitationsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'List invitations' } })
    .input(ListInvitationsInput)
    .output(InvitationList)
    .query(({ ctx, input }) => listInvitations(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: `${base}/{id}`, tags, summary: 'Get an invitation' } })
    .input(InvitationIdInput)
    .output(Invitation)
    .query(({ ctx, input }) => getInvitation(ctx.scope, input.id)),

  findByToken: apiProcedure
    .meta({
      openapi: { method: 'GET', path: `${base}/by_token/{token}`, tags, summary: 'Find an invitation by token' },
      secretPathParams: ['token'],
    })
    .input(InvitationTokenInput)
    .output(Invitation)
    .query(({ ctx, input }) => findInvitationByToken(ctx.scope, input.token)),

  send: apiProcedure
    .meta({ openapi: { method: 'POST', path: base, tags, summary: 'Send an invitation' }, successStatus: 201 })
    .input(SendInvitationInput)
    .output(Invitation)
    .mutation(async ({ ctx, input }) => (await sendInvitation(ctx.scope, input)).invitation),

  accept: apiProcedure
    .meta({ openapi: { method: 'POST', path: `${base}/{id}/accept`, tags, summary: 'Accept an invitation' } })
    .input(InvitationIdInput)
    .output(Invitation)
    .mutation(({ ctx, input }) => acceptInvitation(ctx.scope, input.id)),

  revoke: apiProcedure
    .meta({ openapi: { method: 'POST', path: `${base}/{id}/revoke`, tags, summary: 'Revoke an invitation' } })
    .input(InvitationIdInput)
    .output(Invitation)
    .mutation(({ ctx, input }) => revokeInvitation(ctx.scope, input.id)),

  resend: apiProcedure
    .meta({ openapi: { method: 'POST', path: `${base}/{id}/resend`, tags, summary: 'Resend an invitation' } })
    .input(ResendInvitationInput)
    .output(Invitation)
    .mutation(async ({ ctx, input }) => (await resendInvitation(ctx.scope, input)).invitation),
});
