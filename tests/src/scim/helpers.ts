// A directory with its SCIM token, and an HTTP client speaking SCIM to its base URL.
import { createDirectory, scopeOf } from '@atrium/routers';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export interface TestDirectory {
  env: TestEnvironment;
  organizationId: string;
  directoryId: string;
  token: string;
  /** The directory's SCIM base path on the test server (`/scim/v2/<id>`). */
  base: string;
  /** The base URL the directory advertises (`<issuer>/scim/v2/<id>`). */
  baseUrl: string;
  /** HTTP with the directory's bearer token; bodies sent as `application/scim+json`. */
  scim: HttpClient;
}

/** A directory of a new organization (in `env`, or a new environment). */
export async function newDirectory(
  options: { env?: TestEnvironment; organizationId?: string; type?: string } = {},
): Promise<TestDirectory> {
  const env = options.env ?? (await newEnvironment());
  let organizationId = options.organizationId;
  if (!organizationId) {
    const org = await env.http.post('/organizations', { name: `SCIM org ${Date.now()}` });
    if (org.status !== 201) throw new Error(`organization: ${org.status} ${org.text}`);
    organizationId = org.body.id as string;
  }
  const scope = await scopeOf(env.deps, env.environmentId);
  const created = await createDirectory(scope, {
    organization_id: organizationId,
    name: 'Okta',
    type: (options.type ?? 'okta scim v2.0') as never,
  } as never);
  const base = `/scim/v2/${created.id}`;
  return {
    env,
    organizationId,
    directoryId: created.id,
    token: created.bearer_token,
    base,
    baseUrl: created.scim_base_url,
    scim: scimClient(env, created.bearer_token),
  };
}

export function scimClient(env: TestEnvironment, token: string): HttpClient {
  return new HttpClient(env.world.url, {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/scim+json',
  });
}

let userCounter = 0;

/** A SCIM User body with a unique userName. */
export function scimUser(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  userCounter += 1;
  const userName = `user${userCounter}-${process.pid}-${Date.now().toString(36)}@example.com`;
  return {
    schemas: [USER_SCHEMA],
    userName,
    externalId: `ext-${userCounter}-${Date.now().toString(36)}`,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    active: true,
    ...overrides,
  };
}
