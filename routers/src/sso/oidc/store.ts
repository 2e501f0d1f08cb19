import { type AttributeMapping, connections, type Db } from '@atrium/db';
import { scopedId } from '../../common/store.ts';
import type { ConnectionRow } from '../../connections/store.ts';

/** What configuring an OpenID Connect connection writes on its row. */
export interface OidcColumns {
  oidcIssuer: string;
  oidcDiscoveryEndpoint: string;
  oidcMetadata: Record<string, unknown>;
  oidcClientId: string;
  /** `null` clears the secret (a public client); `undefined` keeps the stored one. */
  oidcClientSecretSealed: string | null | undefined;
  oidcScopes: string[];
  attributeMapping: AttributeMapping;
}

/** Writes a connection's OpenID Connect configuration; the row, or undefined if it is gone. */
export async function updateOidcColumns(
  tx: Db,
  environmentId: string,
  id: string,
  values: OidcColumns,
  now: Date,
): Promise<ConnectionRow | undefined> {
  const set: Partial<typeof connections.$inferInsert> = {
    oidcIssuer: values.oidcIssuer,
    oidcDiscoveryEndpoint: values.oidcDiscoveryEndpoint,
    oidcMetadata: values.oidcMetadata,
    oidcClientId: values.oidcClientId,
    oidcScopes: values.oidcScopes,
    attributeMapping: values.attributeMapping,
    updatedAt: now,
  };
  if (values.oidcClientSecretSealed !== undefined) set.oidcClientSecretSealed = values.oidcClientSecretSealed;
  const [row] = await tx
    .update(connections)
    .set(set)
    .where(scopedId(connections, environmentId, id))
    .returning();
  return row;
}
