// The discovery documents (RFC 7644 §4): what this service provider supports, its resource types
// and their schemas (core User, Group, and the enterprise User extension).
import {
  ENTERPRISE_SCHEMA,
  GROUP_SCHEMA,
  RESOURCE_TYPE_SCHEMA,
  SCHEMA_SCHEMA,
  SERVICE_PROVIDER_CONFIG_SCHEMA,
  USER_SCHEMA,
} from './protocol.ts';

/** The most resources one page returns (a larger `count` is cut to it, as RFC 7644 §3.4.2.4 allows). */
export const MAX_RESULTS = 100;
/** `count` when none is asked for. */
export const DEFAULT_COUNT = 100;

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    documentationUri: 'https://datatracker.ietf.org/doc/html/rfc7644',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: "The directory's SCIM bearer token, sent as 'Authorization: Bearer scim_…'.",
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string): Record<string, unknown>[] {
  return [
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'User Account',
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'Group',
      schema: GROUP_SCHEMA,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

type Attribute = Record<string, unknown>;

function attr(name: string, options: Partial<Attribute> = {}): Attribute {
  return {
    name,
    type: 'string',
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...options,
  };
}

function complex(name: string, subAttributes: Attribute[], options: Partial<Attribute> = {}): Attribute {
  return attr(name, { type: 'complex', subAttributes, ...options });
}

const multiValued = (name: string, extra: Attribute[] = []) =>
  complex(name, [attr('value'), attr('display'), attr('type'), attr('primary', { type: 'boolean' }), ...extra], {
    multiValued: true,
  });

const USER_ATTRIBUTES: Attribute[] = [
  attr('userName', { required: true, uniqueness: 'server' }),
  complex('name', [
    attr('formatted'),
    attr('familyName'),
    attr('givenName'),
    attr('middleName'),
    attr('honorificPrefix'),
    attr('honorificSuffix'),
  ]),
  attr('displayName'),
  attr('nickName'),
  attr('profileUrl', { type: 'reference', referenceTypes: ['external'] }),
  attr('title'),
  attr('userType'),
  attr('preferredLanguage'),
  attr('locale'),
  attr('timezone'),
  attr('active', { type: 'boolean' }),
  multiValued('emails'),
  multiValued('phoneNumbers'),
  multiValued('ims'),
  multiValued('photos'),
  complex(
    'addresses',
    [
      attr('formatted'),
      attr('streetAddress'),
      attr('locality'),
      attr('region'),
      attr('postalCode'),
      attr('country'),
      attr('type'),
      attr('primary', { type: 'boolean' }),
    ],
    { multiValued: true },
  ),
  // Read-only (RFC 7643 section 4.1.2): the groups of the directory the user is a member of, as
  // the groups' `members` say it; ignored in a POST, PUT or PATCH.
  complex(
    'groups',
    [
      attr('value', { mutability: 'readOnly' }),
      attr('$ref', { type: 'reference', referenceTypes: ['Group'], mutability: 'readOnly' }),
      attr('display', { mutability: 'readOnly' }),
    ],
    { multiValued: true, mutability: 'readOnly' },
  ),
  multiValued('entitlements'),
  multiValued('roles'),
];

const GROUP_ATTRIBUTES: Attribute[] = [
  attr('displayName', { required: true }),
  complex(
    'members',
    [
      attr('value', { mutability: 'immutable' }),
      attr('display', { mutability: 'immutable' }),
      attr('$ref', { type: 'reference', referenceTypes: ['User', 'Group'], mutability: 'immutable' }),
      attr('type', { mutability: 'immutable', canonicalValues: ['User'] }),
    ],
    { multiValued: true },
  ),
];

const ENTERPRISE_ATTRIBUTES: Attribute[] = [
  attr('employeeNumber'),
  attr('costCenter'),
  attr('organization'),
  attr('division'),
  attr('department'),
  complex('manager', [
    attr('value'),
    attr('$ref', { type: 'reference', referenceTypes: ['User'] }),
    attr('displayName', { mutability: 'readOnly' }),
  ]),
];

export function schemas(base: string): Record<string, unknown>[] {
  const schema = (id: string, name: string, description: string, attributes: Attribute[]) => ({
    schemas: [SCHEMA_SCHEMA],
    id,
    name,
    description,
    attributes,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
  });
  return [
    schema(USER_SCHEMA, 'User', 'User Account', USER_ATTRIBUTES),
    schema(GROUP_SCHEMA, 'Group', 'Group', GROUP_ATTRIBUTES),
    schema(ENTERPRISE_SCHEMA, 'EnterpriseUser', 'Enterprise User', ENTERPRISE_ATTRIBUTES),
  ];
}
