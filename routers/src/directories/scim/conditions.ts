// The SCIM filter as conditions on directory users and groups: what scim/filter.ts compiles a
// filter to and the directories' SCIM store (store.ts here) turns into SQL. Types only.

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'lt' | 'ge' | 'le' | 'pr';

/** A column compared as text: `ci` case-insensitively (userName, displayName, e-mails). */
export type TextField = 'id' | 'userName' | 'externalId' | 'givenName' | 'familyName' | 'displayName';
export type TimeField = 'created' | 'lastModified';

export type Condition =
  | { kind: 'and' | 'or'; items: Condition[] }
  | { kind: 'not'; item: Condition }
  | { kind: 'text'; field: TextField; op: CompareOp; value: string; ci: boolean }
  | { kind: 'time'; field: TimeField; op: CompareOp; value: Date | undefined }
  | { kind: 'active'; op: 'eq' | 'ne' | 'pr'; value: boolean }
  /** An element of a multi-valued attribute (emails) matching each of `where`. */
  | { kind: 'element'; attribute: 'emails'; where: ElementTest[] }
  /** A top-level string attribute of the stored resource (title, nickName, the enterprise extension's). */
  | { kind: 'attribute'; path: string[]; op: CompareOp; value: string }
  /** A group's member. */
  | { kind: 'member'; value: string };

export interface ElementTest {
  sub: 'value' | 'type' | 'primary';
  op: CompareOp;
  value: string | boolean;
}
