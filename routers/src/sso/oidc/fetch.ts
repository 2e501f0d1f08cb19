import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { hostOf, isPublicAddress, parseWebhookUrl, publicOnlyLookup } from '../../webhooks/url-policy.ts';

/**
 * Every request the OIDC module makes to a tenant's OpenID provider (discovery, JWKS, token,
 * userinfo) goes through `providerFetch`: the webhook address rules, checked against the address
 * actually connected to (no DNS rebinding), plain http only to loopback and only when the operator
 * allowed private addresses (`WEBHOOKS_ALLOW_PRIVATE`, the tests' loopback provider), no redirects
 * followed, and a bounded body.
 */

/** The most a provider's answer may weigh (a discovery document or a JWKS is a few KB). */
const MAX_BODY_BYTES = 1024 * 1024;

/** A request the address rules refused (never sent). */
export class AddressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefused';
  }
}

function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * Why `raw` may not be fetched under the rules, or null. Syntax and literal addresses only; names
 * are checked against what they resolve to when the request connects.
 */
export function refusalOf(raw: string, allowPrivate: boolean): string | null {
  const parsed = parseWebhookUrl(raw);
  if (!parsed.ok) return parsed.message.replace('endpoint_url', 'the URL');
  const host = hostOf(parsed.url);
  if (parsed.url.protocol === 'http:' && !(allowPrivate && isLoopbackHost(host))) {
    return 'the URL must use https (plain http only to loopback, when private addresses are allowed).';
  }
  if (!allowPrivate && (isLoopbackHost(host) || (isIP(host) && !isPublicAddress(host)))) {
    return 'the URL points to a private, loopback or link-local address.';
  }
  return null;
}

type FetchBody = string | URLSearchParams | ArrayBuffer | Uint8Array | null | undefined;

function bodyBytes(body: FetchBody): Buffer | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** A fetch (openid-client's `customFetch` signature) under the address rules. */
export function providerFetch(allowPrivate: boolean) {
  return (
    url: string,
    options: { body?: unknown; headers: Record<string, string>; method: string; signal?: AbortSignal },
  ): Promise<Response> => {
    const refusal = refusalOf(url, allowPrivate);
    if (refusal) return Promise.reject(new AddressRefused(refusal));
    const target = new URL(url);
    const body = bodyBytes(options.body as FetchBody);
    return new Promise<Response>((resolve, reject) => {
      const client = target.protocol === 'https:' ? https : http;
      const request = client.request(
        target,
        {
          method: options.method,
          headers: body ? { ...options.headers, 'content-length': String(body.length) } : options.headers,
          agent: false,
          lookup: allowPrivate ? undefined : (publicOnlyLookup as never),
          signal: options.signal,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY_BYTES) {
              response.destroy();
              reject(new Error(`the provider's answer is larger than ${MAX_BODY_BYTES} bytes.`));
              return;
            }
            chunks.push(chunk);
          });
          response.on('error', reject);
          response.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (Array.isArray(value)) for (const v of value) headers.append(name, v);
              else if (value !== undefined) headers.set(name, value);
            }
            const status = response.statusCode ?? 502;
            const empty = status === 204 || status === 205 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers }));
          });
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) => {
        reject(
          error.code === 'EPRIVATE'
            ? new AddressRefused('the URL resolves to a private, loopback or link-local address.')
            : error,
        );
      });
      request.end(body);
    });
  };
}
