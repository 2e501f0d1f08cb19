// The SCIM operations of one directory (RFC 7644 §3): reads through this folder's store, writes
// through the directories resource's protocol-free writes (directories/sync.ts), which provision
// and record events. Every function works in a DirectoryScope: the token's directory only.

import {
  groupsOfUsers,
  membersOfGroups,
  pageOfScimGroups,
  pageOfScimUsers,
  type ScimSort,
  SORTABLE,
} from '../directories/scim/store.ts';
import { scimBaseUrl } from '../directories/service.ts';
import {
  type DirectoryGroupRow,
  type DirectoryUserRow,
  findDirectoryGroup,
  findDirectoryUser,
} from '../directories/store.ts';
import {
  createDirectoryGroup,
  createDirectoryUser,
  type DirectoryRef,
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
import { operationsOf, userPatcher } from './patch.ts';
import { attributeList, excludes, project } from './projection.ts';
import { etagOf, expectedVersionOf, invalidValue, isRecord, LIST_SCHEMA, scimError } from './protocol.ts';
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

/** The token's directory: its lookup read what a write needs (auth/directory-token.ts). */
function directoryOf(scope: DirectoryScope): DirectoryRef {
  const { directoryId, organizationId, state } = scope.directory;
  return { id: directoryId, organizationId, state };
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
  sort: ScimSort | undefined;
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

  return {
    offset: startIndex - 1,
    count,
    startIndex,
    filter: text === undefined || text.trim() === '' ? undefined : compileFilter(text, resource),
    attributes: attributeList(query.attributes),
    excluded: attributeList(query.excludedattributes),
    sort: sortOf(query, resource),
  };
}

/**
 * `sortBy` (one of `SORTABLE`'s attributes, any case; another is 400 `invalidValue`) and
 * `sortOrder` (`ascending`, the default, or `descending`; any case). Without `sortBy`, creation order.
 */
function sortOf(query: Record<string, string>, resource: 'User' | 'Group'): ScimSort | undefined {
  const by = query.sortby?.trim() ?? '';
  const order = query.sortorder?.trim().toLowerCase() ?? '';
  if (order !== '' && order !== 'ascending' && order !== 'descending') {
    throw invalidValue("'sortOrder' must be 'ascending' or 'descending'.");
  }
  if (by === '') return undefined;
  const attribute = SORTABLE[resource][by.toLowerCase()];
  if (!attribute) {
    const names = Object.values(SORTABLE[resource]).join(', ');
    throw invalidValue(`A ${resource} list sorts by ${names} only.`);
  }
  return { by: attribute, descending: order === 'descending' };
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

/** Which attributes a response returns (`attributes`, `excludedAttributes`). */
interface Projection {
  attributes: string[][] | undefined;
  excluded: string[][] | undefined;
}

const ALL: Projection = { attributes: undefined, excluded: undefined };

function projectionOf(call: ScimCall): Projection {
  const query = caseless(call.query);
  return { attributes: attributeList(query.attributes), excluded: attributeList(query.excludedattributes) };
}

/** Turns rows into their resources as the projection returns them (reading what it does not leave out). */
type ToResources<Row> = (
  scope: DirectoryScope,
  rows: Row[],
  projection: Projection,
) => Promise<Record<string, unknown>[]>;

/** A page of one resource type (users or groups) as a ListResponse. */
async function listOf<Row>(
  scope: DirectoryScope,
  call: ScimCall,
  resource: 'User' | 'Group',
  page: typeof pageOfScimUsers | typeof pageOfScimGroups,
  toResources: ToResources<Row>,
): Promise<ScimResult> {
  const params = listParams(call, resource);
  const found = await page(
    scope.db,
    scope.env.id,
    scope.directory.directoryId,
    params.filter,
    params.offset,
    params.count,
    params.sort,
  );
  const resources = await toResources(scope, found.rows as Row[], params);
  return { resource: listResponse(found.total, params.startIndex, resources) };
}

/** One resource with its ETag. */
async function oneOf<Row extends { version: number }>(
  scope: DirectoryScope,
  row: Row,
  projection: Projection,
  toResources: ToResources<Row>,
): Promise<ScimResult> {
  const [resource] = await toResources(scope, [row], projection);
  return { resource, etag: etagOf(row.version) };
}

// ---- users ----

const userLocation = (scope: DirectoryScope, id: string) => `${baseOf(scope)}/Users/${id}`;
const groupLocation = (scope: DirectoryScope, id: string) => `${baseOf(scope)}/Groups/${id}`;

/**
 * Resources of rows, with one attribute read apart for all of them at once (a User's `groups`, a
 * Group's `members`), unless the projection leaves it out (then it is not read).
 */
function resourcesWith<Row extends { id: string }, Related>(
  attribute: string,
  read: (db: DirectoryScope['db'], ids: string[]) => Promise<Map<string, Related[]>>,
  toResource: (scope: DirectoryScope, row: Row, related: Related[] | undefined) => Record<string, unknown>,
): ToResources<Row> {
  return async (scope, rows, projection) => {
    const related = excludes(attribute, projection.attributes, projection.excluded)
      ? undefined
      : await read(
          scope.db,
          rows.map((row) => row.id),
        );
    return rows.map((row) =>
      project(
        toResource(scope, row, related && (related.get(row.id) ?? [])),
        projection.attributes,
        projection.excluded,
      ),
    );
  };
}

/** User resources, with their read-only `groups`. */
const userResources = resourcesWith<DirectoryUserRow, { id: string; displayName: string }>(
  'groups',
  groupsOfUsers,
  (scope, row, groups) =>
    toScimUser(
      row,
      userLocation(scope, row.id),
      groups?.map((g) => ({ value: g.id, $ref: groupLocation(scope, g.id), display: g.displayName })),
    ),
);

export function listUsers(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  return listOf(scope, call, 'User', pageOfScimUsers, userResources);
}

export async function getUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const row = await findDirectoryUser(scope.db, scope.directory.directoryId, id);
  if (!row) throw notFound('User', id);
  return oneOf(scope, row, projectionOf(call), userResources);
}

export async function createUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const fields = userFieldsOf(bodyOf(call));
  const row = await createDirectoryUser(scope, directoryOf(scope), fields);
  // A user just created belongs to no group: nothing to read.
  return { resource: toScimUser(row, userLocation(scope, row.id)), etag: etagOf(row.version) };
}

export async function replaceUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const body = bodyOf(call);
  refuseOtherId(body, id);
  const fields = userFieldsOf(body);
  const row = await replaceDirectoryUser(scope, directoryOf(scope), id, fields, expectedVersionOf(call.ifMatch)).catch(
    resourceNotFound('User', id),
  );
  return oneOf(scope, row, ALL, userResources);
}

/** The directories resource's 404 as SCIM's (its detail names the SCIM resource type). */
const resourceNotFound = (what: 'User' | 'Group', id: string) => (error: unknown) => {
  if (error instanceof ApiError && error.status === 404) throw notFound(what, id);
  throw error;
};

/**
 * A PATCH: read, apply, write, under the resource's row lock (the write, sync.ts's own
 * transaction, runs inside this one as a savepoint), so concurrent PATCHes of one resource
 * serialise and none is lost. `If-Match` is checked against the locked row.
 */
async function patched<Row extends { version: number }>(
  scope: DirectoryScope,
  call: ScimCall,
  what: 'User' | 'Group',
  find: (tx: DirectoryScope['db'], directoryId: string, id: string) => Promise<Row | undefined>,
  write: (scope: DirectoryScope, directory: DirectoryRef, current: Row, operations: ScimOperations) => Promise<Row>,
): Promise<Row> {
  const id = call.id as string;
  const operations = operationsOf(bodyOf(call));
  const expected = expectedVersionOf(call.ifMatch);
  const directory = directoryOf(scope);
  return scope.db.transaction(async (tx) => {
    const current = await find(tx, directory.id, id);
    if (!current) throw notFound(what, id);
    if (expected !== undefined && current.version !== expected) throw preconditionFailed();
    return write({ ...scope, db: tx }, directory, current, operations);
  });
}

type ScimOperations = ReturnType<typeof operationsOf>;

export async function patchUserResource(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const patchUser = await userPatcher();
  const row = await patched(
    scope,
    call,
    'User',
    (tx, directoryId, id) => findDirectoryUser(tx, directoryId, id, 'update'),
    (inTx, directory, current, operations) => {
      const resource: Record<string, unknown> = {
        ...current.attributes,
        userName: current.userName,
        active: current.state === 'active',
      };
      if (current.externalId !== null) resource.externalId = current.externalId;
      const fields = userFieldsOf(patchUser(resource, operations));
      return replaceDirectoryUser(inTx, directory, current.id, fields, current.version);
    },
  );
  return oneOf(scope, row, ALL, userResources);
}

export async function deleteUser(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  await deleteDirectoryUser(scope, directoryOf(scope), id, expectedVersionOf(call.ifMatch)).catch(
    resourceNotFound('User', id),
  );
  return { resource: undefined };
}

// ---- groups ----

/** Group resources, with their `members`. */
const groupResources = resourcesWith<DirectoryGroupRow, { id: string; userName: string }>(
  'members',
  membersOfGroups,
  (scope, row, members) => toScimGroup(row, groupLocation(scope, row.id), members && scimMembers(scope, members)),
);

function scimMembers(scope: DirectoryScope, members: Array<{ id: string; userName: string }>): ScimMember[] {
  return members.map((m) => ({ value: m.id, display: m.userName, $ref: userLocation(scope, m.id) }));
}

export function listGroups(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  return listOf(scope, call, 'Group', pageOfScimGroups, groupResources);
}

async function groupResource(scope: DirectoryScope, projection: Projection, id: string): Promise<ScimResult> {
  const row = await findDirectoryGroup(scope.db, scope.directory.directoryId, id);
  if (!row) throw notFound('Group', id);
  return oneOf(scope, row, projection, groupResources);
}

export function getGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  return groupResource(scope, projectionOf(call), call.id as string);
}

export async function createGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const { fields, members } = groupFieldsOf(bodyOf(call));
  const row = await createDirectoryGroup(scope, directoryOf(scope), fields, members);
  return groupResource(scope, ALL, row.id);
}

export async function replaceGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  const body = bodyOf(call);
  refuseOtherId(body, id);
  const { fields, members } = groupFieldsOf(body);
  // Okta's PUT carries the whole member list: it replaces the members. Without `members`, they stay.
  const change = body.members === undefined ? undefined : { replace: members };
  await writeDirectoryGroup(scope, directoryOf(scope), id, fields, change, expectedVersionOf(call.ifMatch)).catch(
    resourceNotFound('Group', id),
  );
  return groupResource(scope, ALL, id);
}

/**
 * A Group PATCH answers 204 (RFC 7644 section 3.5.2 allows it): a group of 10,000 members is not
 * sent back each time.
 */
export async function patchGroupResource(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const row = await patched(
    scope,
    call,
    'Group',
    (tx, directoryId, id) => findDirectoryGroup(tx, directoryId, id, 'update'),
    (inTx, directory, current, operations) => {
      const { fields, members } = patchGroup(current, operations);
      return writeDirectoryGroup(inTx, directory, current.id, fields, members, current.version);
    },
  );
  return { resource: undefined, etag: etagOf(row.version) };
}

export async function deleteGroup(scope: DirectoryScope, call: ScimCall): Promise<ScimResult> {
  const id = call.id as string;
  await deleteDirectoryGroup(scope, directoryOf(scope), id, expectedVersionOf(call.ifMatch)).catch(
    resourceNotFound('Group', id),
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
