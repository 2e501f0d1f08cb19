// SCIM users <-> the directory's fields (brief of issue #36): what Atrium reads of a SCIM User,
// and the User resource it answers with.
import { iso } from '../common/schemas.ts';
import type { DirectoryUserRow } from '../directories/store.ts';
import type { DirectoryUserFields } from '../directories/sync.ts';
import { booleanOf, ENTERPRISE_SCHEMA, etagOf, invalidValue, isRecord, mutability, USER_SCHEMA } from './protocol.ts';

/** The longest userName, externalId or e-mail kept (longer ones are refused). */
const MAX_STRING = 1024;
/** A loose e-mail shape: enough to tell an e-mail from a login name. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Never stored from what the client sent: the attributes the service owns, `password` (RFC 7643
 * §4.1.1: writeOnly, never returned; Okta sends it when password sync is on, and Atrium signs
 * directory users in through their identity provider), `groups` (readOnly, RFC 7643 section
 * 4.1.2: the groups' own members say it), and `__proto__`, which names no attribute.
 */
const SERVER_OWNED = ['id', 'meta', 'password', 'groups', '__proto__'];

function optionalString(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidValue(`'${name}' must be a string.`);
  if (value.length > MAX_STRING) throw invalidValue(`'${name}' is longer than ${MAX_STRING} characters.`);
  return value === '' ? null : value;
}

/**
 * The resource as it will be stored (upstream's `raw_attributes`): what the client sent, less the
 * attributes the server owns, with Entra's string booleans (`active`, `emails[].primary`) made
 * booleans. Refuses (400 `invalidValue`) a resource whose attributes have the wrong types.
 */
export function normaliseUser(resource: Record<string, unknown>): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const key of Object.keys(resource)) {
    if (!SERVER_OWNED.includes(key)) attributes[key] = resource[key];
  }
  if (attributes.active !== undefined && attributes.active !== null) {
    const active = booleanOf(attributes.active);
    if (active === undefined) throw invalidValue("'active' must be a boolean.");
    attributes.active = active;
  }
  if (attributes.emails !== undefined && attributes.emails !== null) {
    if (!Array.isArray(attributes.emails)) throw invalidValue("'emails' must be an array.");
    attributes.emails = attributes.emails.map((email) => {
      if (!isRecord(email)) throw invalidValue("Each of 'emails' must be an object.");
      if (email.value !== undefined && typeof email.value !== 'string') {
        throw invalidValue("'emails.value' must be a string.");
      }
      if (email.primary === undefined) return email;
      const primary = booleanOf(email.primary);
      if (primary === undefined) throw invalidValue("'emails.primary' must be a boolean.");
      return { ...email, primary };
    });
  }
  if (attributes.name !== undefined && attributes.name !== null && !isRecord(attributes.name)) {
    throw invalidValue("'name' must be an object.");
  }
  const enterprise = attributes[ENTERPRISE_SCHEMA];
  if (enterprise !== undefined && enterprise !== null && !isRecord(enterprise)) {
    throw invalidValue(`'${ENTERPRISE_SCHEMA}' must be an object.`);
  }
  if (!Array.isArray(attributes.schemas)) {
    attributes.schemas = enterprise ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA];
  }
  return attributes;
}

/** The e-mail Atrium reads: the primary one, else the first work one, else the first; else userName if it is one. */
function emailOf(attributes: Record<string, unknown>, userName: string): string | null {
  const emails = Array.isArray(attributes.emails)
    ? attributes.emails.filter((e): e is Record<string, unknown> => isRecord(e) && typeof e.value === 'string')
    : [];
  const chosen =
    emails.find((e) => e.primary === true) ??
    emails.find((e) => typeof e.type === 'string' && e.type.toLowerCase() === 'work') ??
    emails[0];
  const value = typeof chosen?.value === 'string' ? chosen.value.trim() : '';
  if (value !== '') return value.length > MAX_STRING ? null : value.toLowerCase();
  return EMAIL.test(userName) ? userName.toLowerCase() : null;
}

function stringAt(source: unknown, key: string): string | undefined {
  if (!isRecord(source)) return undefined;
  const value = source[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Upstream's `custom_attributes` of a SCIM user: the enterprise extension's department, cost
 * center, division, employee number and manager, the core `title` and `userType`, each present
 * only when the identity provider sent it.
 */
function customAttributesOf(attributes: Record<string, unknown>): Record<string, unknown> {
  const enterprise = attributes[ENTERPRISE_SCHEMA];
  const custom: Record<string, unknown> = {};
  const put = (key: string, value: string | undefined) => {
    if (value !== undefined) custom[key] = value;
  };
  put('department', stringAt(enterprise, 'department'));
  put('job_title', stringAt(attributes, 'title'));
  put('employee_type', stringAt(attributes, 'userType'));
  put('cost_center', stringAt(enterprise, 'costCenter'));
  put('division', stringAt(enterprise, 'division'));
  put('organization', stringAt(enterprise, 'organization'));
  put('employee_number', stringAt(enterprise, 'employeeNumber'));
  const manager = isRecord(enterprise) ? enterprise.manager : undefined;
  const managerValue = typeof manager === 'string' ? manager : stringAt(manager, 'value');
  const managerEmail =
    stringAt(manager, 'email') ?? (managerValue && EMAIL.test(managerValue) ? managerValue : undefined);
  put('manager_email', managerEmail);
  put('manager_id', managerValue && !EMAIL.test(managerValue) ? managerValue : undefined);
  return custom;
}

/** What Atrium stores of a SCIM User (POST, PUT, or the result of a PATCH). */
export function userFieldsOf(resource: Record<string, unknown>): DirectoryUserFields {
  const attributes = normaliseUser(resource);
  const userName = typeof attributes.userName === 'string' ? attributes.userName.trim() : '';
  if (userName === '') throw invalidValue("'userName' is required.");
  if (userName.length > MAX_STRING) throw invalidValue(`'userName' is longer than ${MAX_STRING} characters.`);
  const name = isRecord(attributes.name) ? attributes.name : {};
  return {
    userName,
    externalId: optionalString(attributes.externalId, 'externalId'),
    email: emailOf(attributes, userName),
    firstName: optionalString(name.givenName, 'name.givenName'),
    lastName: optionalString(name.familyName, 'name.familyName'),
    active: attributes.active === undefined || attributes.active === null ? true : attributes.active === true,
    attributes,
    customAttributes: customAttributesOf(attributes),
  };
}

/** A write may not change a resource's `id` (RFC 7643 §3.1: `id` is readOnly). */
export function refuseOtherId(resource: Record<string, unknown>, id: string): void {
  if (resource.id !== undefined && resource.id !== id) throw mutability("'id' cannot be changed.");
}

/** One of a User's read-only `groups` (RFC 7643 section 4.1.2). */
export interface ScimUserGroup {
  value: string;
  $ref: string;
  display: string;
}

/**
 * The User resource of a directory user: what was stored, with the attributes the server owns;
 * `groups` when they were read and it has some (a multi-valued attribute without values is
 * unassigned, so absent).
 */
export function toScimUser(
  row: DirectoryUserRow,
  location: string,
  groups?: ScimUserGroup[] | undefined,
): Record<string, unknown> {
  const { id: _id, meta: _meta, groups: _groups, ...attributes } = row.attributes;
  const user: Record<string, unknown> = {
    ...attributes,
    schemas: Array.isArray(attributes.schemas) ? attributes.schemas : [USER_SCHEMA],
    id: row.id,
    externalId: row.externalId,
    userName: row.userName,
    active: row.state === 'active',
    meta: {
      resourceType: 'User',
      created: iso(row.createdAt),
      lastModified: iso(row.updatedAt),
      location,
      version: etagOf(row.version),
    },
  };
  // Absent, not null, when unset (deleted, not spread: tests/src/patches/v8-promotion.test.ts).
  if (row.externalId === null) delete user.externalId;
  if (groups && groups.length > 0) user.groups = groups;
  return user;
}
