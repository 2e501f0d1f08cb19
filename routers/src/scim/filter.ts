// SCIM filters (RFC 7644 §3.4.2.2), read with `scim2-parse-filter` and compiled to the conditions
// the directories' SCIM store (directories/scim/store.ts) turns into SQL: the attributes identity providers filter on, each with the case rule
// RFC 7643 gives it. Anything else is 400 `invalidFilter`, never a full scan of JSON.
import { type Filter, parse } from 'scim2-parse-filter';
import type { CompareOp, Condition, ElementTest, TextField, TimeField } from '../directories/scim/conditions.ts';
import { ENTERPRISE_SCHEMA, invalidFilter } from './protocol.ts';

export type { CompareOp, Condition, ElementTest, TextField, TimeField };

/** The most nodes a filter may have (a bound on the SQL it turns into). */
const MAX_NODES = 50;
const MAX_FILTER_LENGTH = 2048;

type Resource = 'User' | 'Group';

const USER_TEXT: Record<string, { field: TextField; ci: boolean }> = {
  id: { field: 'id', ci: false },
  username: { field: 'userName', ci: true },
  externalid: { field: 'externalId', ci: false },
  'name.givenname': { field: 'givenName', ci: true },
  'name.familyname': { field: 'familyName', ci: true },
};
const GROUP_TEXT: Record<string, { field: TextField; ci: boolean }> = {
  id: { field: 'id', ci: false },
  displayname: { field: 'displayName', ci: true },
  externalid: { field: 'externalId', ci: false },
};
const TIMES: Record<string, TimeField> = { 'meta.created': 'created', 'meta.lastmodified': 'lastModified' };
/** Stored string attributes of a User a filter may name (core and enterprise extension). */
const USER_ATTRIBUTES: Record<string, string> = {
  displayname: 'displayName',
  nickname: 'nickName',
  title: 'title',
  usertype: 'userType',
  preferredlanguage: 'preferredLanguage',
  locale: 'locale',
};
const ENTERPRISE_ATTRIBUTES: Record<string, string> = {
  department: 'department',
  division: 'division',
  costcenter: 'costCenter',
  organization: 'organization',
  employeenumber: 'employeeNumber',
};
const ENTERPRISE_PREFIX = `${ENTERPRISE_SCHEMA.toLowerCase()}:`;
const CORE_PREFIX = /^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i;

function stringValue(f: { compValue?: unknown }, path: string): string {
  if (typeof f.compValue !== 'string') throw invalidFilter(`'${path}' is compared with a string.`);
  return f.compValue;
}

/** Compiles a filter text for `resource`; 400 `invalidFilter` when it cannot be read or is not supported. */
export function compileFilter(text: string, resource: Resource): Condition {
  if (text.length > MAX_FILTER_LENGTH) throw invalidFilter(`A filter holds at most ${MAX_FILTER_LENGTH} characters.`);
  let filter: Filter;
  try {
    filter = parse(text);
  } catch {
    throw invalidFilter(`The filter '${text.slice(0, 200)}' cannot be read.`);
  }
  let nodes = 0;
  const compile = (f: Filter): Condition => {
    if (++nodes > MAX_NODES) throw invalidFilter(`A filter holds at most ${MAX_NODES} expressions.`);
    switch (f.op) {
      case 'and':
      case 'or':
        return { kind: f.op, items: mergeElements(f.op, f.filters, compile) };
      case 'not':
        return { kind: 'not', item: compile(f.filter) };
      case '[]':
        return elementOf(f.attrPath, f.valFilter, resource);
      default:
        return compare(f as Filter & { attrPath: string; compValue?: unknown }, resource);
    }
  };
  return compile(filter);
}

/**
 * `emails[type eq "work"].value eq "x"` reads as `emails[type eq "work"] and emails.value eq "x"`
 * (the parser's form): the two become one element test, so both hold of the same e-mail.
 */
function mergeElements(op: 'and' | 'or', filters: Filter[], compile: (f: Filter) => Condition): Condition[] {
  const items = filters.map(compile);
  if (op !== 'and') return items;
  const merged: Condition[] = [];
  for (const item of items) {
    const last = merged[merged.length - 1];
    if (item.kind === 'element' && last?.kind === 'element' && last.attribute === item.attribute) {
      merged[merged.length - 1] = { ...last, where: [...last.where, ...item.where] };
    } else merged.push(item);
  }
  return merged;
}

function elementTest(sub: string, f: Filter): ElementTest {
  const s = sub.toLowerCase();
  if (!('attrPath' in f) || (s !== 'value' && s !== 'type' && s !== 'primary')) {
    throw invalidFilter(`Only 'emails' with 'value', 'type' or 'primary' may be filtered.`);
  }
  const op = f.op as CompareOp;
  if (op === 'pr') return { sub: s, op, value: '' };
  const value = (f as { compValue?: unknown }).compValue;
  if (s === 'primary') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne'))
      throw invalidFilter("'emails.primary' is compared with true or false.");
    return { sub: s, op, value };
  }
  if (typeof value !== 'string') throw invalidFilter(`'emails.${s}' is compared with a string.`);
  return { sub: s, op, value };
}

function elementOf(attrPath: string, valFilter: Filter, resource: Resource): Condition {
  if (resource !== 'User' || attrPath.replace(CORE_PREFIX, '').toLowerCase() !== 'emails') {
    throw invalidFilter(`'${attrPath}[…]' cannot be filtered; 'emails[…]' can.`);
  }
  const tests: ElementTest[] = [];
  const visit = (f: Filter) => {
    if (f.op === 'and') {
      for (const one of f.filters) visit(one);
      return;
    }
    if (!('attrPath' in f)) throw invalidFilter("Inside 'emails[…]' only 'and' joins tests.");
    tests.push(elementTest(f.attrPath, f));
  };
  visit(valFilter);
  return { kind: 'element', attribute: 'emails', where: tests };
}

function compare(f: { op: string; attrPath: string; compValue?: unknown }, resource: Resource): Condition {
  const op = f.op as CompareOp;
  const path = f.attrPath.replace(CORE_PREFIX, '');
  const key = path.toLowerCase();
  const text = (resource === 'User' ? USER_TEXT : GROUP_TEXT)[key];
  if (text) {
    return { kind: 'text', ...text, op, value: op === 'pr' ? '' : stringValue(f, path) };
  }
  const time = TIMES[key];
  if (time) {
    if (op === 'pr') return { kind: 'time', field: time, op, value: undefined };
    const value = new Date(stringValue(f, path));
    if (Number.isNaN(value.getTime())) throw invalidFilter(`'${path}' is compared with a date-time.`);
    if (op === 'co' || op === 'sw' || op === 'ew') throw invalidFilter(`'${path}' takes eq, ne, gt, ge, lt, le or pr.`);
    return { kind: 'time', field: time, op, value };
  }
  if (resource === 'User' && key === 'active') {
    if (op === 'pr') return { kind: 'active', op, value: true };
    if ((op !== 'eq' && op !== 'ne') || typeof f.compValue !== 'boolean') {
      throw invalidFilter("'active' is compared with eq or ne and true or false.");
    }
    return { kind: 'active', op, value: f.compValue };
  }
  if (resource === 'User' && (key === 'emails' || key.startsWith('emails.'))) {
    return {
      kind: 'element',
      attribute: 'emails',
      where: [elementTest(key === 'emails' ? 'value' : key.slice(7), f as Filter)],
    };
  }
  if (resource === 'Group' && (key === 'members' || key === 'members.value')) {
    if (op !== 'eq') throw invalidFilter("'members' is filtered with eq.");
    return { kind: 'member', value: stringValue(f, path) };
  }
  const core = resource === 'User' ? USER_ATTRIBUTES[key] : undefined;
  if (core) return { kind: 'attribute', path: [core], op, value: op === 'pr' ? '' : stringValue(f, path) };
  const extension = resource === 'User' && key.startsWith(ENTERPRISE_PREFIX);
  const name = extension ? ENTERPRISE_ATTRIBUTES[key.slice(ENTERPRISE_PREFIX.length)] : undefined;
  if (name) {
    return { kind: 'attribute', path: [ENTERPRISE_SCHEMA, name], op, value: op === 'pr' ? '' : stringValue(f, path) };
  }
  throw invalidFilter(`Filtering on '${f.attrPath}' is not supported.`);
}
