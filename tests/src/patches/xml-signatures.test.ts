import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { DOMParser } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import xpath from 'xpath';

/**
 * What patches/xml-crypto+6.3.2.patch and patches/@node-saml+node-saml+5.1.0.patch must keep:
 * they find the element a signature references (and the first SignedInfo, and the comments to
 * discard) by walking the DOM instead of evaluating XPath expressions over the whole document,
 * which took most of a SAML verification's CPU. Each case below derives its expected outcome from
 * the very XPath the patch replaced, evaluated by xpath.js, so the walk must select what it did:
 * anti-wrapping refusals included.
 */
const require = createRequire(import.meta.url);
const { SignedXml } = require('xml-crypto') as typeof import('xml-crypto');
const { getVerifiedXml } = require('@node-saml/node-saml/lib/xml') as {
  getVerifiedXml(fullXml: string, currentNode: Element, pemFiles: string[]): string | null;
};

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const ID_ATTRIBUTES = ['Id', 'ID', 'id'];

/** A document whose element `ID="_a1"` is signed (enveloped, exclusive c14n), the signature inside it. */
function signed(xml: string): string {
  const signer = new SignedXml({ privateKey: privatePem });
  signer.signatureAlgorithm = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
  signer.canonicalizationAlgorithm = 'http://www.w3.org/2001/10/xml-exc-c14n#';
  signer.addReference({
    xpath: "//*[@ID='_a1']",
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signer.computeSignature(xml, { location: { reference: "//*[@ID='_a1']", action: 'append' } });
  return signer.getSignedXml();
}

const parse = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
const signatureOf = (doc: Document) =>
  (xpath.select(`//*[local-name(.)='Signature' and namespace-uri(.)='${DSIG}']`, doc as unknown as Node) as Node[])[0];

/** The outcome xml-crypto had before the patch: its XPath's matches over the three id attributes. */
function xpathMatches(doc: Document, id: string): number {
  return ID_ATTRIBUTES.reduce(
    (n, attr) =>
      n + (xpath.select(`//*[@*[local-name(.)='${attr}']='${id}']`, doc as unknown as Node) as Node[]).length,
    0,
  );
}

function check(xml: string) {
  const doc = parse(xml);
  const verifier = new SignedXml({ publicCert: publicPem });
  verifier.loadSignature(signatureOf(doc) as Node);
  try {
    return { valid: verifier.checkSignature(xml), references: verifier.getSignedReferences() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const base = signed(
  '<r:Response xmlns:r="urn:r" ID="_r"><a:Assertion xmlns:a="urn:a" ID="_a1"><a:NameID>alice@example.com</a:NameID></a:Assertion></r:Response>',
);

/** `base` with a second element carrying the signed element's ID (the classic wrapping). */
const duplicatedId = base.replace(
  '<r:Response xmlns:r="urn:r" ID="_r">',
  '<r:Response xmlns:r="urn:r" ID="_r"><x ID="_a1"/>',
);
/** `base` with a namespaced attribute whose local name is ID and whose value is the signed element's. */
const namespacedId = base.replace('ID="_r"', 'ID="_r" xmlns:q="urn:q" q:ID="_a1"');

describe('the patched xml-crypto reference lookup', () => {
  const evil = signed(
    '<r:Response xmlns:r="urn:r" ID="_r"><a:Assertion xmlns:a="urn:a" ID="_a1"><a:NameID>alice@example.com.evil</a:NameID></a:Assertion></r:Response>',
  );
  const wrapped = 'multiple elements with the same value for the ID';
  // [case, document, the XPath's matches over the three id attributes, the outcome]
  const cases: Array<[string, string, number, { valid: boolean; signedText?: string } | { error: string }]> = [
    ['the signed document as made', base, 1, { valid: true, signedText: '<a:NameID>alice@example.com</a:NameID>' }],
    ['a second element with the same ID (wrapping)', duplicatedId, 2, { error: wrapped }],
    [
      'another element with the same value in a lowercase id',
      base.replace('ID="_r"', 'id="_a1"'),
      2,
      { error: wrapped },
    ],
    ['a namespaced attribute whose local name is ID', namespacedId, 2, { error: wrapped }],
    [
      'a namespace declaration whose prefix is ID',
      base.replace('ID="_r"', 'ID="_r" xmlns:ID="_a1"'),
      2,
      { error: wrapped },
    ],
    ['the referenced element renamed away', base.replace('ID="_a1"', 'Ref="_a1"'), 0, { valid: false }],
    [
      'a comment inside the signed NameID (c14n discards it)',
      evil.replace('alice@example.com.evil', 'alice@example.com<!---->.evil'),
      1,
      { valid: true, signedText: '<a:NameID>alice@example.com.evil</a:NameID>' },
    ],
    ['the NameID changed after signing', base.replace('alice@example.com', 'mallory@example.com'), 1, { valid: false }],
  ];

  it.each(cases)('decides as its XPath did: %s', (_name, xml, matches, expected) => {
    expect(xpathMatches(parse(xml), '_a1')).toBe(matches);
    const outcome = check(xml);
    if ('error' in expected) {
      expect(outcome.error).toContain(expected.error);
      return;
    }
    expect(outcome.error).toBeUndefined();
    expect(outcome.valid).toBe(expected.valid);
    if (!expected.valid) expect(outcome.references).toEqual([]);
    if (expected.signedText) {
      const references = (outcome.references ?? []).join('');
      expect(references).toContain(expected.signedText);
      expect(references).not.toContain('<!--');
    }
  });

  it('keeps refusing a reference URI with a quote in it', () => {
    const xml = base.replace('URI="#_a1"', `URI="#_a1' or '1'='1"`);
    expect(check(xml).error).toMatch(/quotes/);
  });
});

describe('the patched node-saml ID check (//*[@ID=...])', () => {
  const verified = (xml: string) => {
    const doc = parse(xml);
    const assertion = (xpath.select("//*[local-name(.)='Assertion']", doc as unknown as Node) as Node[])[0] as Element;
    try {
      return { xml: getVerifiedXml(xml, assertion, [publicPem]) };
    } catch (error) {
      return { error: (error as Error).message };
    }
  };

  it('returns the signed element of a document whose ID is unique', () => {
    expect(verified(base).xml).toContain('alice@example.com');
  });

  it('refuses a second element carrying the ID in no namespace, as its XPath did', () => {
    const xml = duplicatedId;
    expect((xpath.select('//*[@ID="_a1"]', parse(xml) as unknown as Node) as Node[]).length).toBe(2);
    expect(verified(xml).error).toMatch(/ID cannot refer to more than one element/);
  });

  it('does not count a namespaced ID attribute, as its XPath did not (xml-crypto still refuses it)', () => {
    const xml = namespacedId;
    expect((xpath.select('//*[@ID="_a1"]', parse(xml) as unknown as Node) as Node[]).length).toBe(1);
    // node-saml's own count passes; xml-crypto's (any local name ID) refuses, so nothing is verified.
    expect(verified(xml).xml ?? null).toBeNull();
  });
});
