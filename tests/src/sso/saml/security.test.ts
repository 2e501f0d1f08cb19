// Attacks on the ACS, each refused with its reason code (and, where it matters, nothing remembered).
// XML signature wrapping follows "On Breaking SAML: Be Whoever You Want to Be" (Somorovsky et al.,
// USENIX Security 2012), XSW1-XSW8: the signed element stays intact somewhere in the document
// while the one the application would read is the attacker's.
import { samlAssertionIds } from '@atrium/db';
import { consumeSamlResponse, hasAssertionId, SsoFailure, startSaml } from '@atrium/routers';
import { DOMParser, XMLSerializer, type Element as XmlElement, type Node as XmlNode } from '@xmldom/xmldom';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  b64,
  makeSamlIdpKey,
  type SamlIdpKey,
  samlResponseXml,
  samlSetup,
  sign,
  startTestIdp,
  testClock,
} from '../../helpers/saml-idp.ts';

const clock = testClock();
let idp: Awaited<ReturnType<typeof startTestIdp>>;
let stranger: SamlIdpKey;
let second: SamlIdpKey;

beforeAll(async () => {
  idp = await startTestIdp(clock);
  const from = new Date(clock.at.getTime() - 86_400_000);
  const until = new Date(clock.at.getTime() + 365 * 86_400_000);
  stranger = await makeSamlIdpKey('Someone else', from, until);
  second = await makeSamlIdpKey('Atrium test IdP (next)', from, until);
  await samlSetup(idp, clock);
});
afterAll(async () => {
  await idp.close();
});

const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol';
const DS = 'http://www.w3.org/2000/09/xmldsig#';

function parse(xml: string) {
  return new DOMParser().parseFromString(xml, 'text/xml');
}
const serialize = (node: unknown) => new XMLSerializer().serializeToString(node as XmlNode);
type El = XmlElement;
function child(parent: El, ns: string, name: string): El {
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as El).localName === name && (node as El).namespaceURI === ns) return node as El;
  }
  throw new Error(`no ${name} under ${parent.localName}`);
}
/** Makes the assertion `a` name the attacker (NameID and e-mail attribute) under a new ID. */
function makeEvil(a: El, id: string | null = '_evil') {
  if (id) a.setAttribute('ID', id);
  const subject = child(a, SAML, 'Subject');
  const nameId = child(subject, SAML, 'NameID');
  nameId.textContent = 'eve@evil.example';
  for (const value of Array.from(a.getElementsByTagNameNS(SAML, 'AttributeValue'))) {
    if ((value.parentNode as El).getAttribute('Name') === 'email') value.textContent = 'eve@evil.example';
  }
  return a;
}
function removeSignature(element: El) {
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as El).localName === 'Signature') {
      element.removeChild(node);
      return;
    }
  }
}

async function refusal(promise: Promise<unknown>): Promise<SsoFailure> {
  const error = await promise.then(
    (value) => value,
    (e: unknown) => e,
  );
  if (!(error instanceof SsoFailure)) throw new Error(`accepted: ${JSON.stringify(error)}`);
  return error;
}

/** A connection, a fresh AuthnRequest, and helpers to post responses to it. */
async function attackSetup(config: Parameters<typeof samlSetup>[2] = {}) {
  const setup = await samlSetup(idp, clock, config);
  const { samlRequestId } = await startSaml(setup.scope, await setup.row(), 'sso_authorization_01ATTACK');
  const post = async (xml: string, expected: { samlRequestId: string } | null = { samlRequestId }) =>
    consumeSamlResponse(setup.scope, await setup.row(), { SAMLResponse: b64(xml) }, expected);
  const signed = (signing: Parameters<typeof sign>[1], overrides = {}, key: SamlIdpKey = idp.key) =>
    sign(samlResponseXml(setup.fields(samlRequestId, overrides)), signing, key);
  return { setup, samlRequestId, post, signed };
}

/** What an attack gets: the parsed signed document, its root, and the setup (for a fresh assertion). */
interface AttackInput {
  doc: ReturnType<typeof parse>;
  root: El;
  setup: Awaited<ReturnType<typeof attackSetup>>;
}
/** One attack on the ACS: what the IdP signed, how the attacker rewrites it, and the refusal's reason. */
interface Attack {
  name: string;
  signing: 'response' | 'assertion';
  attack: (input: AttackInput) => string;
  reason: string;
}

/** Runs a table of attacks, each on a connection and AuthnRequest of its own. */
function refusesEach(attacks: Attack[]) {
  it.each(attacks.map((a) => [a.name, a] as const))('%s', async (_name, { signing, attack, reason }) => {
    const setup = await attackSetup();
    const doc = parse(setup.signed(signing));
    const xml = attack({ doc, root: doc.documentElement as El, setup });
    expect((await refusal(setup.post(xml))).reason).toBe(reason);
  });
}

describe('XML signature wrapping (XSW1-XSW8)', () => {
  refusesEach([
    // Response-signed variants: the signed Response moved out of the way.
    {
      name: 'XSW1: a new Response with the attacker assertion, the signed Response inside its Signature',
      signing: 'response',
      reason: 'invalid_signature',
      attack: ({ root }) => {
        const evil = root.cloneNode(true) as El;
        evil.setAttribute('ID', '_evilresponse');
        makeEvil(child(evil, SAML, 'Assertion'));
        child(evil, DS, 'Signature').appendChild(root.cloneNode(true));
        return serialize(evil);
      },
    },
    {
      name: 'XSW2: a new Response with the signed Response before its (detached) Signature',
      signing: 'response',
      reason: 'invalid_signature',
      attack: ({ root }) => {
        const evil = root.cloneNode(true) as El;
        evil.setAttribute('ID', '_evilresponse');
        makeEvil(child(evil, SAML, 'Assertion'));
        const signature = child(evil, DS, 'Signature');
        const wrapped = root.cloneNode(true) as El;
        removeSignature(wrapped);
        evil.insertBefore(wrapped, signature);
        return serialize(evil);
      },
    },
    // Assertion-signed variants: the signed Assertion kept, the attacker's read instead.
    {
      name: 'XSW3: an unsigned attacker assertion before the signed one',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const assertion = child(root, SAML, 'Assertion');
        const evil = makeEvil(assertion.cloneNode(true) as El);
        removeSignature(evil);
        root.insertBefore(evil, assertion);
        return serialize(doc);
      },
    },
    {
      name: 'XSW3 (after): an unsigned attacker assertion after the signed one',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const evil = makeEvil(child(root, SAML, 'Assertion').cloneNode(true) as El);
        removeSignature(evil);
        root.appendChild(evil);
        return serialize(doc);
      },
    },
    {
      name: 'XSW4: the attacker assertion wraps the signed one',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const assertion = child(root, SAML, 'Assertion');
        const evil = makeEvil(assertion.cloneNode(true) as El);
        removeSignature(evil);
        evil.appendChild(assertion.cloneNode(true));
        root.replaceChild(evil, assertion);
        return serialize(doc);
      },
    },
    {
      name: 'XSW5: the signed assertion altered in place, an intact copy (same ID) appended to the Response',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const assertion = child(root, SAML, 'Assertion');
        const copy = assertion.cloneNode(true) as El;
        removeSignature(copy);
        makeEvil(assertion, null);
        root.appendChild(copy);
        return serialize(doc);
      },
    },
    {
      name: 'XSW6: the signed assertion altered in place, an intact copy inside its Signature',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const assertion = child(root, SAML, 'Assertion');
        const copy = assertion.cloneNode(true) as El;
        removeSignature(copy);
        makeEvil(assertion, null);
        const object = doc.createElementNS(DS, 'ds:Object');
        object.appendChild(copy);
        child(assertion, DS, 'Signature').appendChild(object);
        return serialize(doc);
      },
    },
    {
      name: 'XSW7: the signed assertion moved into an Extensions element, the attacker assertion in its place',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const assertion = child(root, SAML, 'Assertion');
        const evil = makeEvil(assertion.cloneNode(true) as El);
        removeSignature(evil);
        const extensions = doc.createElementNS(SAMLP, 'samlp:Extensions');
        extensions.appendChild(assertion.cloneNode(true));
        root.replaceChild(evil, assertion);
        root.insertBefore(extensions, child(root, SAMLP, 'Status'));
        return serialize(doc);
      },
    },
    {
      name: 'XSW7 (signature): the Signature moved into Extensions, the assertion altered',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const assertion = child(root, SAML, 'Assertion');
        const signature = child(assertion, DS, 'Signature');
        assertion.removeChild(signature);
        makeEvil(assertion, null);
        const extensions = doc.createElementNS(SAMLP, 'samlp:Extensions');
        extensions.appendChild(signature);
        root.insertBefore(extensions, child(root, SAMLP, 'Status'));
        return serialize(doc);
      },
    },
    {
      name: 'XSW8: the attacker assertion carries the Signature, the original (unsigned) inside its ds:Object',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        const assertion = child(root, SAML, 'Assertion');
        const original = assertion.cloneNode(true) as El;
        removeSignature(original);
        const evil = makeEvil(assertion.cloneNode(true) as El, null);
        const object = doc.createElementNS(DS, 'ds:Object');
        object.appendChild(original);
        child(evil, DS, 'Signature').appendChild(object);
        root.replaceChild(evil, assertion);
        return serialize(doc);
      },
    },
    {
      name: 'a signed Response carrying a second, unsigned assertion',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root, setup }) => {
        const fields = setup.setup.fields(setup.samlRequestId, { nameId: 'eve@evil.example' });
        const evil = parse(samlResponseXml(fields));
        root.appendChild(child(evil.documentElement as El, SAML, 'Assertion'));
        return signResponseOf(serialize(doc));
      },
    },
  ]);
});

/** The response signed again as a whole (an IdP key the attacker does not hold is the point elsewhere). */
function signResponseOf(xml: string) {
  return sign(xml, 'response', idp.key);
}

describe('which signatures a connection accepts', () => {
  // Accepted: a signed Response (covers its assertion, as Google signs) or a signed Assertion
  // (as Okta and Entra ID sign by default), or both. Refused: anything else.
  it('accepts an unsigned assertion inside a signed response', async () => {
    const { post, signed } = await attackSetup();
    expect((await post(signed('response'))).email).toBe('ada@example.com');
  });

  it('accepts a signed assertion inside an unsigned response', async () => {
    const { post, signed } = await attackSetup();
    expect((await post(signed('assertion'))).email).toBe('ada@example.com');
  });

  refusesEach([
    {
      name: 'refuses an assertion altered after the response was signed',
      signing: 'response',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        makeEvil(child(root, SAML, 'Assertion'), null);
        return serialize(doc);
      },
    },
    {
      name: 'refuses a signed assertion altered inside an unsigned response',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        makeEvil(child(root, SAML, 'Assertion'), null);
        return serialize(doc);
      },
    },
    {
      name: 'refuses an assertion with its signature stripped from an unsigned response',
      signing: 'assertion',
      reason: 'invalid_signature',
      attack: ({ doc, root }) => {
        removeSignature(child(root, SAML, 'Assertion'));
        return serialize(doc);
      },
    },
  ]);
  it('refuses a response signed by an unknown key (its own certificate in KeyInfo does not help)', async () => {
    const { post, signed, setup } = await attackSetup();
    const xml = signed('both', { assertionId: '_stranger' }, stranger);
    expect(xml).toContain(stranger.certificateBase64);
    expect((await refusal(post(xml))).reason).toBe('invalid_signature');
    expect(await hasAssertionId(setup.env.deps.db, setup.connectionId, '_stranger')).toBe(false);
  });
});

describe('comments inside NameID', () => {
  it('reads the whole NameID and attribute, never the part before the comment', async () => {
    const { post, signed } = await attackSetup();
    const xml = signed('assertion', {
      nameId: 'user@evil.com.example.com',
      attributes: { email: 'user@evil.com.example.com' },
    }).replaceAll('user@evil.com.example.com', 'user@evil.com<!---->.example.com');
    expect(xml.match(/<!---->/g)).toHaveLength(2);
    const identity = await post(xml);
    expect(identity.idpId).toBe('user@evil.com.example.com');
    expect(identity.email).toBe('user@evil.com.example.com');
  });
});

describe('replay', () => {
  it('refuses the second POST of one assertion', async () => {
    const { post, signed, setup } = await attackSetup();
    const xml = signed('both', { assertionId: '_once' });
    expect((await post(xml)).email).toBe('ada@example.com');
    expect((await refusal(post(xml))).reason).toBe('replayed_assertion');
    expect(await hasAssertionId(setup.env.deps.db, setup.connectionId, '_once')).toBe(true);
  });

  it('an expired entry of the id (the sweep not run yet) does not refuse it: it is renewed, then guards', async () => {
    const { post, signed, setup } = await attackSetup();
    const stale = new Date(clock.at.getTime() - 1_000);
    await setup.env.deps.db.insert(samlAssertionIds).values({
      environmentId: setup.env.environmentId,
      connectionId: setup.connectionId,
      assertionId: '_stale',
      expiresAt: stale,
    });
    const xml = signed('both', { assertionId: '_stale' });
    expect((await post(xml)).email).toBe('ada@example.com');
    const [row] = await setup.env.deps.db
      .select()
      .from(samlAssertionIds)
      .where(and(eq(samlAssertionIds.connectionId, setup.connectionId), eq(samlAssertionIds.assertionId, '_stale')));
    expect(row?.expiresAt.getTime()).toBeGreaterThan(clock.at.getTime());
    expect((await refusal(post(xml))).reason).toBe('replayed_assertion');
  });

  it('refuses a replay wrapped in a fresh response signature', async () => {
    const { post, signed } = await attackSetup();
    const first = signed('assertion', { assertionId: '_rewrapped' });
    await post(first);
    const doc = parse(first);
    (doc.documentElement as El).setAttribute('ID', '_anotherresponse');
    expect((await refusal(post(serialize(doc)))).reason).toBe('replayed_assertion');
  });
});

describe('InResponseTo, Audience, Recipient, Destination, Issuer', () => {
  it.each([
    ['another request', { inResponseTo: '_someoneelses' }],
    ['no InResponseTo', { inResponseTo: undefined }],
  ])('refuses a response to %s', async (_label, overrides) => {
    const { post, signed } = await attackSetup();
    expect((await refusal(post(signed('both', overrides)))).reason).toBe('in_response_to_mismatch');
  });

  it.each([
    ['audience_mismatch', { audience: 'https://other-sp.example/saml' }],
    ['recipient_mismatch', { recipient: 'https://other-sp.example/acs' }],
    ['destination_mismatch', { destination: 'https://other-sp.example/acs' }],
    ['issuer_mismatch', { issuer: 'https://other-idp.example/metadata' }],
  ])('refuses %s', async (reason, overrides) => {
    const { post, signed, setup } = await attackSetup();
    const xml = signed('both', Object.assign({ assertionId: `_${reason}` }, overrides));
    expect((await refusal(post(xml))).reason).toBe(reason);
    expect(await hasAssertionId(setup.env.deps.db, setup.connectionId, `_${reason}`)).toBe(false);
  });
});

describe('NotBefore and NotOnOrAfter with the clock skew (60 s by default)', () => {
  const at = clock.at.getTime();
  it.each([
    ['NotBefore 59 s ahead (inside the skew)', { notBefore: new Date(at + 59_000) }, null],
    ['NotBefore 61 s ahead', { notBefore: new Date(at + 61_000) }, 'not_yet_valid'],
    ['NotOnOrAfter 59 s ago (inside the skew)', { notOnOrAfter: new Date(at - 59_000) }, null],
    ['NotOnOrAfter 60 s ago', { notOnOrAfter: new Date(at - 60_000) }, 'expired'],
    ['NotOnOrAfter an hour ago', { notOnOrAfter: new Date(at - 3_600_000) }, 'expired'],
  ] as const)('%s', async (_label, overrides, reason) => {
    const { post, signed } = await attackSetup();
    const xml = signed('both', overrides);
    if (reason === null) expect((await post(xml)).email).toBe('ada@example.com');
    else expect((await refusal(post(xml))).reason).toBe(reason);
  });

  it('follows the configured skew (ssoClockSkewSeconds)', async () => {
    const { setup, samlRequestId } = await attackSetup();
    const deps = Object.assign({}, setup.env.deps, {
      config: Object.assign({}, setup.env.deps.config, { ssoClockSkewSeconds: 5 }),
    });
    const scope = Object.assign({}, setup.scope, { deps });
    const post = async (xml: string) =>
      consumeSamlResponse(scope, await setup.row(), { SAMLResponse: b64(xml) }, { samlRequestId });
    const late = sign(
      samlResponseXml(setup.fields(samlRequestId, { notOnOrAfter: new Date(at - 6_000) })),
      'both',
      idp.key,
    );
    expect((await refusal(post(late))).reason).toBe('expired');
    const justIn = sign(
      samlResponseXml(setup.fields(samlRequestId, { notOnOrAfter: new Date(at - 4_000) })),
      'both',
      idp.key,
    );
    expect((await post(justIn)).email).toBe('ada@example.com');
  });

  it('remembers the assertion id until NotOnOrAfter plus the skew', async () => {
    const { post, signed, setup } = await attackSetup();
    const notOnOrAfter = new Date(at + 120_000);
    await post(signed('both', { assertionId: '_expiry', notOnOrAfter }));
    const rows = await setup.env.deps.db
      .select()
      .from(samlAssertionIds)
      .where(and(eq(samlAssertionIds.connectionId, setup.connectionId), eq(samlAssertionIds.assertionId, '_expiry')));
    expect(rows.map((row) => row.expiresAt.getTime())).toEqual([notOnOrAfter.getTime() + 60_000]);
  });
});

describe('certificate rotation', () => {
  it('verifies with either of two IdP certificates, and not with a third', async () => {
    const { post, signed, setup } = await attackSetup({ idp_certificates: [second.certificatePem] });
    expect((await setup.row()).samlIdpCertificates).toHaveLength(2);
    expect((await post(signed('both', {}, idp.key))).email).toBe('ada@example.com');
    expect((await post(signed('both', {}, second))).email).toBe('ada@example.com');
    expect((await refusal(post(signed('both', {}, stranger)))).reason).toBe('invalid_signature');
  });
});

describe('IdP-initiated sign-in', () => {
  it('is refused by default', async () => {
    const { post, setup } = await attackSetup();
    const xml = sign(samlResponseXml(setup.fields(undefined, { assertionId: '_unsolicited' })), 'both', idp.key);
    expect((await refusal(post(xml, null))).reason).toBe('idp_initiated_disabled');
    expect(await hasAssertionId(setup.env.deps.db, setup.connectionId, '_unsolicited')).toBe(false);
  });

  it('is accepted when the connection allows it, once, and never with an InResponseTo', async () => {
    const { post, setup } = await attackSetup({ idp_initiated_enabled: true });
    const xml = sign(samlResponseXml(setup.fields(undefined)), 'both', idp.key);
    expect((await post(xml, null)).email).toBe('ada@example.com');
    expect((await refusal(post(xml, null))).reason).toBe('replayed_assertion');
    const answering = sign(samlResponseXml(setup.fields('_somerequest')), 'both', idp.key);
    expect((await refusal(post(answering, null))).reason).toBe('in_response_to_mismatch');
  });
});
