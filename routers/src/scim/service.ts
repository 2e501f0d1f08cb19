// The SCIM operations of one directory (RFC 7644 §3): reads through this folder's store, writes
// through the directories resource's protocol-free writes (directories/sync.ts), which provision
// and record events. Every function works in a DirectoryScope: the token's directory only.
import { scimBaseUrl } from '../directories/service.ts';
import { type DirectoryRow, findDirectoryGroup, findDirectoryUser, loadDirectory } from '../directories/store.ts';
import {
  createDirectoryGroup,
  createDirectoryUser,
  deleteDirectoryGroup,
  deleteDirectoryUser,
  replaceDirectoryUser,
  writeDirectoryGroup,
} from '../directories/sync.ts';
import { ApiError } from '../kernel/errors.ts';
import type { DirectoryScope } from '../kernel/principals.ts';
import { DEFAULT_COUNT, MAX_RESULTS, resourceTypes, schemas, serviceProviderConfig } from './discovery.ts';
import { type Condition, compileFilter } from './filter.ts';
import { groupFieldsOf, patchGroup, type ScimMember, toScimGroup } from './groups.ts';
import { operationsOf, patchUser } from './patch.ts';
import { attributeList, excludes, project } from './projection.ts';
import { etagOf, expectedVersionOf, invalidValue, isRecord, LIST_SCHEMA, scimError } from './protocol.ts';
import { membersOfGroups, pageOfScimGroups, pageOfScimUsers } from './store.ts';
import { refuseOtherId, toScimUser, userFieldsOf } from './users.ts';

/** One SCIM call as the codec decodes it: the path's directory and id, the query, the body, the preconditions. */
export interface ScimCall {
  directoryId: string;
  id?: string | undefined;
  query?: Record<string, string> | undefined;
  body?: Record<string, unknown> | undefined;
  ifMatch?: string | undefined;
}

/** A SCIM answer: the resource (none for 204) and its ETag. */
export interface ScimResult {
  resource: Record<string, unknown> | undefined;
  etag?: string | undefined;
}

const notFound = (what: 'User' | 'Group', id: string) => scimError(404, undefined, `${what} not found: '${id}'.`);

const preconditionFailed = () => scimError(412, undefined, 'The resource changed since the version named in If-Match.');

function baseOf(scope: DirectoryScope): string {
  return scimBaseUrl(scope.deps, scope.directory.directoryId);
}

async function directoryOf(scope: DirectoryScope): Promise<DirectoryRow> {
  return loadDirectory(scope.db, scope.env.id, scope.directory.directoryId);
}

function bodyOf(call: ScimCall): Record<string, unknown> {
  if (!isRecord(call.body)) throw invalidValue('The request body must be a JSON object.');
  return call.body;
}

// ---- listing ----

interface ListParams {
  offset: number;
  count: number;
  startIndex: number;
  filter: Condition | undefined;
  attributes: string[][] | undefined;
  excluded: string[][] | undefined;
}

function integerParam(query: Record<string, string>, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^-?\d{1,15}$/.test(raw.trim())) throw invalidValue(`'${name}' must be an integer.`);
  return Number(raw);
}

/** The query key of a name in any case (`startindex` as `startIndex`). */
function caseless(query: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query ?? {})) out[key.toLowerCase()] = value;
  return out;
}

function listParams(call: ScimCall, resource: 'User' | 'Group'): ListParams {
  const query = caseless(call.query);
  // RFC 7644 §3.4.2.4: startIndex below 1 is 1, count below 0 is 0; past maxResults, maxResults.
  const startIndex = Math.max(1, integerParam(query, 'startindex') ?? 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, integerParam(query, 'count') ?? DEFAULT_COUNT));
  const text = query.filter;
  if (query.sortby !== undefined && query.sortby !== '') {
    throw scimError(400, 'invalidValue', 'Sorting is not supported (ServiceProviderConfig sort.supported is false).');
  }
  return {
    offset: startIndex - 1,
    count,
    startIndex,
    filter: text === undefined || text.trim() === '' ? undefined : compileFilter(text, resource),
    attributes: attributeList(query.attributes),
    excluded: attributeList(query.excludedattributes),
  };
}

function listResponse(total: number, startIndex: number, resources: Record<string, unknown>[]) {
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    itemsPerPage: resources.length,
    startIndex,
    Resources: resources,
  };
}

// ---- users ----

const userLocation = (scope: DirectoryScope, id: string) => `${baseOf(scope)}/Users/${id}`;

export async function listUsers(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const params = listParams(call, 'User');
  const page = await pageOfScimUsers(
    scope.db,
    scope.env.id,
    scope.directory.directoryId,
    params.filter,
    params.offset,
    params.count,
  );
  const resources = page.rows.map((row) =>
    project(toScimUser(row, userLocation(scope, row.id)), params.attributes, params.excluded),
  );
  return { resource: listResponse(page.total, params.startIndex, resources) };
}

function projectionOf(call: ScimCall) {
  const query = caseless(call.query);
  return { attributes: attributeList(query.attributes), excluded: attributeList(query.excludedattributes) };
}

export async function getUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const row = await findDirectoryUser(scope.db, scope.directory.directoryId, id);
  if (!row) throw notFound('User', id);
  const { attributes, excluded } = projectionOf(call);
  return {
    resource: project(toScimUser(row, userLocation(scope, id)), attributes, excluded),
    etag: etagOf(row.version),
  };
}

export async function createUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const fields = userFieldsOf(bodyOf(call));
  const row = await createDirectoryUser(scope, await directoryOf(scope), fields);
  return { resource: toScimUser(row, userLocation(scope, row.id)), etag: etagOf(row.version) };
}

export async function replaceUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const body = bodyOf(call);
  refuseOtherId(body, id);
  const fields = userFieldsOf(body);
  const row = await replaceDirectoryUser(
    scope,
    await directoryOf(scope),
    id,
    fields,
    expectedVersionOf(call.ifMatch),
  ).catch(userNotFound(id));
  return { resource: toScimUser(row, userLocation(scope, id)), etag: etagOf(row.version) };
}

/** The directories resource's 404 as SCIM's (its detail names the SCIM resource type). */
const userNotFound = (id: string) => (error: unknown) => {
  if (error instanceof ApiError && error.status === 404) throw notFound('User', id);
  throw error;
};
const groupNotFound = (id: string) => (error: unknown) => {
  if (error instanceof ApiError && error.status === 404) throw notFound('Group', id);
  throw error;
};

/**
 * A User PATCH: read, apply, write, under the user's row lock (the write, sync.ts's own
 * transaction, runs inside this one as a savepoint), so concurrent PATCHes of one user serialise
 * and none is lost. `If-Match` is checked against the locked row.
 */
export async function patchUserResource(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const operations = operationsOf(bodyOf(call));
  const expected = expectedVersionOf(call.ifMatch);
  const directory = await directoryOf(scope);
  const row = await scope.db.transaction(async (tx) => {
    const current = await findDirectoryUser(tx, directory.id, id, 'update');
    if (!current) throw notFound('User', id);
    if (expected !== undefined && current.version !== expected) throw preconditionFailed();
    const resource: Record<string, unknown> = {
      ...current.attributes,
      userName: current.userName,
      active: current.state === 'active',
    };
    if (current.externalId !== null) resource.externalId = current.externalId;
    const fields = userFieldsOf(patchUser(resource, operations));
    return replaceDirectoryUser({ ...scope, db: tx }, directory, id, fields, current.version);
  });
  return { resource: toScimUser(row, userLocation(scope, id)), etag: etagOf(row.version) };
}

export async function deleteUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  await deleteDirectoryUser(scope, await directoryOf(scope), id, expectedVersionOf(call.ifMatch)).catch(
    userNotFound(id),
  );
  return { resource: undefined };
}

// ---- groups ----

const groupLocation = (scope: DirectoryScope, id: string) => `${baseOf(scope)}/Groups/${id}`;

function scimMembers(scope: DirectoryScope, members: Array<{ id: string; userName: string }>): ScimMember[] {
  return members.map((m) => ({ value: m.id, display: m.userName, $ref: userLocation(scope, m.id) }));
}

export async function listGroups(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const params = listParams(call, 'Group');
  const page = await pageOfScimGroups(
    scope.db,
    scope.env.id,
    scope.directory.directoryId,
    params.filter,
    params.offset,
    params.count,
  );
  const withMembers = !excludes('members', params.attributes, params.excluded);
  const members = withMembers
    ? await membersOfGroups(
        scope.db,
        page.rows.map((row) => row.id),
      )
    : undefined;
  const resources = page.rows.map((row) =>
    project(
      toScimGroup(row, groupLocation(scope, row.id), members && scimMembers(scope, members.get(row.id) ?? [])),
      params.attributes,
      params.excluded,
    ),
  );
  return { resource: listResponse(page.total, params.startIndex, resources) };
}

async function groupResource(scope: DirectoryScope, call: ScimCall, id: string): Promise<ScimResult> {
  const row = await findDirectoryGroup(scope.db, scope.directory.directoryId, id);
  if (!row) throw notFound('Group', id);
  const { attributes, excluded } = projectionOf(call);
  const members = excludes('members', attributes, excluded) ? undefined : await membersOfGroups(scope.db, [id]);
  const resource = toScimGroup(row, groupLocation(scope, id), members && scimMembers(scope, members.get(id) ?? []));
  return { resource: project(resource, attributes, excluded), etag: etagOf(row.version) };
}

export function getGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  return groupResource(scope, call, call.id as string);
}

export async function createGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const { fields, members } = groupFieldsOf(bodyOf(call));
  const row = await createDirectoryGroup(scope, await directoryOf(scope), fields, members);
  return groupResource(scope, { directoryId: call.directoryId }, row.id);
}

export async function replaceGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const body = bodyOf(call);
  refuseOtherId(body, id);
  const { fields, members } = groupFieldsOf(body);
  // Okta's PUT carries the whole member list: it replaces the members. Without `members`, they stay.
  const change = body.members === undefined ? undefined : { replace: members };
  await writeDirectoryGroup(scope, await directoryOf(scope), id, fields, change, expectedVersionOf(call.ifMatch)).catch(
    groupNotFound(id),
  );
  return groupResource(scope, { directoryId: call.directoryId }, id);
}

/**
 * A Group PATCH answers 204 (RFC 7644 §3.5.2 allows it): a group of 10,000 members is not sent
 * back each time. Read, apply and write under the group's row lock, as a User PATCH.
 */
export async function patchGroupResource(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const operations = operationsOf(bodyOf(call));
  const expected = expectedVersionOf(call.ifMatch);
  const directory = await directoryOf(scope);
  const row = await scope.db.transaction(async (tx) => {
    const current = await findDirectoryGroup(tx, directory.id, id, 'update');
    if (!current) throw notFound('Group', id);
    if (expected !== undefined && current.version !== expected) throw preconditionFailed();
    const { fields, members } = patchGroup(current, operations);
    return writeDirectoryGroup({ ...scope, db: tx }, directory, id, fields, members, current.version);
  });
  return { resource: undefined, etag: etagOf(row.version) };
}

export async function deleteGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  await deleteDirectoryGroup(scope, await directoryOf(scope), id, expectedVersionOf(call.ifMatch)).catch(
    groupNotFound(id),
  );
  return { resource: undefined };
}

// ---- discovery ----

export function getServiceProviderConfig(scope: DirectoryScope): ScimResult {
  return { resource: serviceProviderConfig(baseOf(scope)) };
}

function listOrOne(all: Record<string, unknown>[], id: string | undefined, what: string): ScimResult {
  if (id === undefined) return { resource: listResponse(all.length, 1, all) };
  const one = all.find((item) => item.id === id);
  if (!one) throw scimError(404, undefined, `${what} not found: '${id}'.`);
  return { resource: one };
}

export function getResourceTypes(scope: DirectoryScope, call: ScimCall): ScimResult {
  return listOrOne(resourceTypes(baseOf(scope)), call.id, 'Resource type');
}

export function getSchemas(scope: DirectoryScope, call: ScimCall): ScimResult {
  return listOrOne(schemas(baseOf(scope)), call.id, 'Schema');
}
