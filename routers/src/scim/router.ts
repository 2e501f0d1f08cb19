// The SCIM surface's procedures (RFC 7644), one per operation, and the routes the SCIM codec
// (rest-facade/src/pipeline/scim.ts) serves them at under `/scim/v2/<directory_id>`. Not part of
// the app router: a SCIM token is accepted here and nowhere else, and nothing here is on /trpc.
import { z } from 'zod';
import type { Context } from '../kernel/context.ts';
import { type DirectoryScope, directoryTokenRefused } from '../kernel/principals.ts';
import { router, scimProcedure } from '../trpc.ts';
import * as scim from './service.ts';

/** What the codec hands every SCIM procedure. */
export const ScimCallInput = z.object({
  directoryId: z.string(),
  id: z.string().optional(),
  query: z.record(z.string(), z.string()).optional(),
  body: z.record(z.string(), z.unknown()).optional(),
  ifMatch: z.string().optional(),
});

type Handler = (scope: DirectoryScope, call: scim.ScimCall) => scim.ScimResult | Promise<scim.ScimResult>;

/**
 * A SCIM procedure: the path's directory must be the token's (else 401, as for an unknown token:
 * nothing says whether the other directory exists); its ETag goes out as a header.
 */
function operation(handler: Handler, kind: 'query' | 'mutation') {
  const run = async ({ ctx, input }: { ctx: Context & { scope: DirectoryScope }; input: scim.ScimCall }) => {
    if (input.directoryId !== ctx.scope.directory.directoryId) throw directoryTokenRefused();
    const result = await handler(ctx.scope, input);
    if (result.etag) ctx.responseHeaders.ETag = result.etag;
    return result.resource;
  };
  const base = scimProcedure.input(ScimCallInput);
  return kind === 'query' ? base.query(run) : base.mutation(run);
}

export const scimRouter = router({
  users: router({
    list: operation(scim.listUsers, 'query'),
    get: operation(scim.getUser, 'query'),
    create: operation(scim.createUser, 'mutation'),
    replace: operation(scim.replaceUser, 'mutation'),
    patch: operation(scim.patchUserResource, 'mutation'),
    delete: operation(scim.deleteUser, 'mutation'),
  }),
  groups: router({
    list: operation(scim.listGroups, 'query'),
    get: operation(scim.getGroup, 'query'),
    create: operation(scim.createGroup, 'mutation'),
    replace: operation(scim.replaceGroup, 'mutation'),
    patch: operation(scim.patchGroupResource, 'mutation'),
    delete: operation(scim.deleteGroup, 'mutation'),
  }),
  serviceProviderConfig: operation(scim.getServiceProviderConfig, 'query'),
  resourceTypes: operation(scim.getResourceTypes, 'query'),
  schemas: operation(scim.getSchemas, 'query'),
});

/** One SCIM route: method, path below the directory's base URL (`{id}` a parameter), procedure, success status. */
export interface ScimRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  procedure: string;
  status: number;
}

export const SCIM_ROUTES: readonly ScimRoute[] = [
  { method: 'GET', path: '/Users', procedure: 'users.list', status: 200 },
  { method: 'POST', path: '/Users', procedure: 'users.create', status: 201 },
  { method: 'GET', path: '/Users/{id}', procedure: 'users.get', status: 200 },
  { method: 'PUT', path: '/Users/{id}', procedure: 'users.replace', status: 200 },
  { method: 'PATCH', path: '/Users/{id}', procedure: 'users.patch', status: 200 },
  { method: 'DELETE', path: '/Users/{id}', procedure: 'users.delete', status: 204 },
  { method: 'GET', path: '/Groups', procedure: 'groups.list', status: 200 },
  { method: 'POST', path: '/Groups', procedure: 'groups.create', status: 201 },
  { method: 'GET', path: '/Groups/{id}', procedure: 'groups.get', status: 200 },
  { method: 'PUT', path: '/Groups/{id}', procedure: 'groups.replace', status: 200 },
  { method: 'PATCH', path: '/Groups/{id}', procedure: 'groups.patch', status: 204 },
  { method: 'DELETE', path: '/Groups/{id}', procedure: 'groups.delete', status: 204 },
  { method: 'GET', path: '/ServiceProviderConfig', procedure: 'serviceProviderConfig', status: 200 },
  { method: 'GET', path: '/ResourceTypes', procedure: 'resourceTypes', status: 200 },
  { method: 'GET', path: '/ResourceTypes/{id}', procedure: 'resourceTypes', status: 200 },
  { method: 'GET', path: '/Schemas', procedure: 'schemas', status: 200 },
  { method: 'GET', path: '/Schemas/{id}', procedure: 'schemas', status: 200 },
];
