// SCIM groups <-> the directory's fields: a Group's attributes (its members kept apart, in
// directory_group_members), its member list, and a PATCH of it as one set-based member change.
import { type Filter, parse as parseFilter } from 'scim2-parse-filter';
import { iso } from '../common/schemas.ts';
import type { DirectoryGroupRow } from '../directories/store.ts';
import type { DirectoryGroupFields, MemberChange } from '../directories/sync.ts';
import { normaliseOp, type PatchOperation } from './patch.ts';
import { etagOf, GROUP_SCHEMA, invalidPath, invalidValue, isRecord } from './protocol.ts';

const MAX_STRING = 1024;

/** The member ids of a `members` value (`[{value}]`, or one `{value}`); 400 for anything else. */
export function memberIdsOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((member) => {
    if (!isRecord(member) || typeof member.value !== 'string' || member.value === '') {
      throw invalidValue("Each member must be an object with a string 'value'.");
    }
    return member.value;
  });
}

/** What Atrium stores of a SCIM Group (POST, PUT): its fields, and its members apart. */
export function groupFieldsOf(resource: Record<string, unknown>): { fields: DirectoryGroupFields; members: string[] } {
  const { id: _id, meta: _meta, members, ...attributes } = resource;
  const displayName = typeof attributes.displayName === 'string' ? attributes.displayName.trim() : '';
  if (displayName === '') throw invalidValue("'displayName' is required.");
  if (displayName.length > MAX_STRING) throw invalidValue(`'displayName' is longer than ${MAX_STRING} characters.`);
  const externalId = attributes.externalId;
  if (externalId !== undefined && externalId !== null && typeof externalId !== 'string') {
    throw invalidValue("'externalId' must be a string.");
  }
  if (!Array.isArray(attributes.schemas)) attributes.schemas = [GROUP_SCHEMA];
  return {
    fields: {
      displayName,
      externalId: typeof externalId === 'string' && externalId !== '' ? externalId : null,
      attributes: { ...attributes, displayName },
    },
    members: memberIdsOf(members),
  };
}

/** One member of a Group resource. */
export interface ScimMember {
  value: string;
  display?: string;
  $ref: string;
}

/** The Group resource of a directory group, with its members when they were read. */
export function toScimGroup(
  row: DirectoryGroupRow,
  location: string,
  members: ScimMember[] | undefined,
): Record<string, unknown> {
  const { id: _id, meta: _meta, members: _members, ...attributes } = row.attributes;
  const group: Record<string, unknown> = {
    ...attributes,
    schemas: Array.isArray(attributes.schemas) ? attributes.schemas : [GROUP_SCHEMA],
    id: row.id,
    externalId: row.externalId,
    displayName: row.displayName,
    members,
    meta: {
      resourceType: 'Group',
      created: iso(row.createdAt),
      lastModified: iso(row.updatedAt),
      location,
      version: etagOf(row.version),
    },
  };
  // Absent, not null, when unset (deleted, not spread: tests/src/patches/v8-promotion.test.ts).
  if (row.externalId === null) delete group.externalId;
  if (members === undefined) delete group.members;
  return group;
}

/** Member changes accumulated over a PATCH's operations, in order. */
class Members {
  replace: Set<string> | undefined;
  readonly add = new Set<string>();
  readonly remove = new Set<string>();

  set(ids: string[]): void {
    this.replace = new Set(ids);
    this.add.clear();
    this.remove.clear();
  }

  added(ids: string[]): void {
    for (const id of ids) {
      if (this.replace) this.replace.add(id);
      else {
        this.add.add(id);
        this.remove.delete(id);
      }
    }
  }

  removed(ids: string[]): void {
    for (const id of ids) {
      if (this.replace) this.replace.delete(id);
      else {
        this.remove.add(id);
        this.add.delete(id);
      }
    }
  }

  change(): MemberChange | undefined {
    if (this.replace) return { replace: [...this.replace] };
    if (this.add.size === 0 && this.remove.size === 0) return undefined;
    return { add: [...this.add], remove: [...this.remove] };
  }
}

/** The ids a `members[value eq "…"]` filter names (`or` of several allowed); 400 `invalidPath` otherwise. */
function idsOfMemberFilter(text: string): string[] {
  let filter: Filter;
  try {
    filter = parseFilter(text);
  } catch {
    throw invalidPath(`The filter of 'members[${text}]' cannot be read.`);
  }
  const ids: string[] = [];
  const visit = (f: Filter): void => {
    if (f.op === 'or') {
      for (const one of f.filters) visit(one);
      return;
    }
    if (f.op === 'eq' && 'attrPath' in f && f.attrPath.toLowerCase() === 'value' && typeof f.compValue === 'string') {
      ids.push(f.compValue);
      return;
    }
    throw invalidPath("Only 'members[value eq \"…\"]' (or several joined by 'or') selects members.");
  };
  visit(filter);
  return ids;
}

/** A group attribute a PATCH may set (members aside). */
function setAttribute(attributes: Record<string, unknown>, path: string, value: unknown, op: string): void {
  const key = path.replace(/^urn:ietf:params:scim:schemas:core:2\.0:Group:/i, '');
  if (key.toLowerCase() === 'id') return;
  if (key.toLowerCase() === 'displayname') {
    if (op === 'remove') throw invalidValue("'displayName' is required.");
    attributes.displayName = value;
    return;
  }
  if (key.toLowerCase() === 'externalid') {
    if (op === 'remove') delete attributes.externalId;
    else attributes.externalId = value;
    return;
  }
  if (!/^[A-Za-z][\w]*$/.test(key)) throw invalidPath(`The path '${path}' is not an attribute of a Group.`);
  if (op === 'remove') delete attributes[key];
  else attributes[key] = value;
}

/**
 * A Group PATCH (RFC 7644 §3.5.2, with Entra's and Okta's variants): attribute changes on a copy
 * of the stored attributes, and every member operation folded into one set-based change (add as
 * an array, `members[value eq "…"]` removal, removal of all, replacement). `fields` is undefined
 * when no attribute changed.
 */
export function patchGroup(
  row: DirectoryGroupRow,
  operations: PatchOperation[],
): { fields: DirectoryGroupFields | undefined; members: MemberChange | undefined } {
  const attributes: Record<string, unknown> = { ...row.attributes, displayName: row.displayName };
  if (row.externalId !== null) attributes.externalId = row.externalId;
  let changed = false;
  const members = new Members();
  for (const raw of operations) {
    const { op, path, value } = normaliseOp(raw);
    if (path === undefined) {
      if (op === 'remove') throw invalidPath("A 'remove' operation needs a 'path'.");
      if (!isRecord(value)) throw invalidValue("An operation without 'path' needs an object 'value'.");
      for (const key of Object.keys(value)) {
        if (key.toLowerCase() === 'members') {
          const ids = memberIdsOf(value[key]);
          if (op === 'replace') members.set(ids);
          else members.added(ids);
        } else {
          setAttribute(attributes, key, value[key], op);
          changed = true;
        }
      }
      continue;
    }
    const bracket = /^members\[(.*)\]$/i.exec(path);
    if (bracket) {
      if (op !== 'remove') throw invalidPath("Only 'remove' takes a 'members[…]' path.");
      members.removed(idsOfMemberFilter(bracket[1] as string));
      continue;
    }
    if (path.toLowerCase() === 'members') {
      if (op === 'remove') {
        if (value === undefined || value === null) members.set([]);
        else members.removed(memberIdsOf(value));
      } else if (op === 'add') members.added(memberIdsOf(value));
      else members.set(memberIdsOf(value));
      continue;
    }
    setAttribute(attributes, path, value, op);
    changed = true;
  }
  return {
    fields: changed ? groupFieldsOf({ ...attributes }).fields : undefined,
    members: members.change(),
  };
}
