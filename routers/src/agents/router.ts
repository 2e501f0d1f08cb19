import { featureProcedure, router } from '../trpc.ts';
import {
  AgentCredentialValidation,
  AgentRegistration,
  RegistrationIdInput,
  ValidateAgentCredentialInput,
} from './schemas.ts';
import { getAgentRegistration, validateAgentCredential } from './service.ts';

const tags = ['Agents'];
const agentsProcedure = featureProcedure('agents');

export const agentsRouter = router({
  validateCredential: agentsProcedure
    .meta({
      openapi: { method: 'POST', path: '/agents/credentials/validate', tags, summary: 'Validate an agent credential' },
    })
    .input(ValidateAgentCredentialInput)
    .output(AgentCredentialValidation)
    .mutation(({ ctx, input }) => validateAgentCredential(ctx.scope, input)),

  getRegistration: agentsProcedure
    .meta({
      openapi: { method: 'GET', path: '/agents/registrations/{id}', tags, summary: 'Get an agent registration' },
    })
    .input(RegistrationIdInput)
    .output(AgentRegistration)
    .query(({ ctx, input }) => getAgentRegistration(ctx.scope, input.id)),
});
