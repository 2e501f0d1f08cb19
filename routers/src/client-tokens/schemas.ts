import { z } from 'zod';
import { Id } from '../common/schemas.ts';

export const CreateClientTokenInput = z.object({ organization_id: Id, user_id: Id });

export const ClientToken = z.object({ token: z.string() }).meta({ id: 'ClientToken' });
export type ClientToken = z.infer<typeof ClientToken>;
