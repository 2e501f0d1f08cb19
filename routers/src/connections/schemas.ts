import { CONNECTION_STATES, CONNECTION_TYPES } from '@atrium/db';
import { z } from 'zod';
import { Id, ListMetadata, ListParams, Timestamp } from '../common/schemas.ts';

export const Connection = z
  .object({
    object: z.literal('connection'),
    id: z.string(),
    organization_id: z.string(),
    connection_type: z.enum(CONNECTION_TYPES),
    name: z.string(),
    state: z.enum(CONNECTION_STATES),
    /** Upstream's deprecated but required `status`: `linked` while the connection is active. */
    status: z.enum(['linked', 'unlinked']),
    /** Upstream's connection domains, as stored on the connection. */
    domains: z.array(z.object({ object: z.literal('connection_domain'), id: z.string(), domain: z.string() })),
    /**
     * Upstream's SAML options, only on SAML connections: `signing_cert` is the certificate the
     * connection signs its AuthnRequests with (PEM), null until one was made.
     */
    options: z.object({ signing_cert: z.string().nullable() }).optional(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Connection' });
export type Connection = z.infer<typeof Connection>;

export const ConnectionIdInput = z.object({ id: Id });

export const ListConnectionsInput = ListParams.extend({
  organization_id: Id.optional(),
  connection_type: z.enum(CONNECTION_TYPES).optional(),
});

/** The connection list has no `object` field (the specification shows none). */
export const ConnectionList = z
  .object({ data: z.array(Connection), list_metadata: ListMetadata })
  .meta({ id: 'ConnectionList' });

export const CreateConnectionInput = z.object({
  organization_id: Id,
  connection_type: z.enum(CONNECTION_TYPES),
  name: z.string().trim().min(1).max(256),
  state: z.enum(CONNECTION_STATES).default('active'),
});
