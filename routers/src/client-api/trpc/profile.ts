import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { ClientUser, toClientUser, UpdateMeInput } from '../profile/schemas.ts';
import { getMe, getOrganizationUser, ownPasswordSet, updateProfile } from '../profile/service.ts';
import { declared } from '../variants.ts';

/** `client.me`, `client.user`, `client.updateProfile`: GraphQL's operations and shapes. */
export const profileClientProcedures = {
  me: clientProcedure.output(ClientUser).query(async ({ ctx }) => toClientUser(await getMe(ctx.scope))),
  user: clientProcedure
    .input(z.object({ id: Id }))
    .output(ClientUser)
    .query(async ({ ctx, input }) => toClientUser(await getOrganizationUser(ctx.scope, input.id))),
  /** Whether the caller has a password (GraphQL `User.passwordSet`, only on the caller's own user). */
  passwordSet: clientProcedure.output(z.boolean()).query(({ ctx }) => ownPasswordSet(ctx.scope)),
  updateProfile: clientProcedure
    .input(UpdateMeInput)
    .output(
      z.discriminatedUnion('__typename', [
        z.object({ __typename: z.literal('ProfileUpdated'), user: ClientUser }),
        z.object({ __typename: z.literal('InvalidLocale'), _placeholder: z.boolean() }),
      ]),
    )
    .mutation(({ ctx, input }) =>
      declared('updateProfile', async () => ({
        __typename: 'ProfileUpdated' as const,
        user: toClientUser(await updateProfile(ctx.scope, input)),
      })),
    ),
};
