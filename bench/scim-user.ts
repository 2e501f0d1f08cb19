/**
 * The user an identity provider pushes (Okta's "Create the User" body with the enterprise
 * extension, its values numbered): every SCIM bench POSTs this one.
 */
export function oktaUserBody(userName: string, externalId: string, i: number) {
  return {
    schemas: [
      'urn:ietf:params:scim:schemas:core:2.0:User',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
    ],
    userName,
    externalId,
    name: { givenName: `Given${i}`, familyName: `Family${i}` },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: `Given${i} Family${i}`,
    active: true,
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': {
      department: `Department ${i % 20}`,
      employeeNumber: String(i),
    },
  };
}
