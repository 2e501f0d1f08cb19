import { AGENT_REGISTRATION_KINDS, AGENT_REGISTRATION_STATUSES } from '@atrium/db';
import { z } from 'zod';
import { Id, Timestamp } from '../common/schemas.ts';

export const ValidateAgentCredentialInput = z.object({
  type: z.enum(['access_token', 'api_key']),
  /** Any string: one too long to be a credential is simply not valid. */
  credential: z.string(),
  /** The expected audience of an access token (default: the environment's client id). */
  audience: z.string().max(512).optional(),
});

export const AgentCredentialValidation = z
  .object({
    valid: z.boolean(),
    registration_id: z.string().nullable(),
    expires_at: Timestamp.nullable(),
  })
  .meta({ id: 'AgentCredentialValidation' });
export type AgentCredentialValidation = z.infer<typeof AgentCredentialValidation>;

export const AgentRegistration = z
  .object({
    object: z.literal('agent_registration'),
    id: z.string(),
    agent_identity: z.object({
      id: z.string(),
      userland_user_id: z.string().nullable(),
      created_at: Timestamp,
      updated_at: Timestamp,
    }),
    organization_id: z.string(),
    status: z.enum(AGENT_REGISTRATION_STATUSES),
    kind: z.enum(AGENT_REGISTRATION_KINDS),
    claim: z.object({
      id: z.string(),
      claim_completion: z
        .object({
          id: z.string(),
          created_at: Timestamp,
          updated_at: Timestamp,
          expires_at: Timestamp,
          claimed_at: Timestamp,
        })
        .nullable(),
      created_at: Timestamp,
      updated_at: Timestamp,
      expires_at: Timestamp,
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'AgentRegistration' });
export type AgentRegistration = z.infer<typeof AgentRegistration>;

export const RegistrationIdInput = z.object({ id: Id });
