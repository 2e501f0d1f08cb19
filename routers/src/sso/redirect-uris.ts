import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { orNotFound } from '../common/store.ts';
import { conflict, invalid } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import type { CreateRedirectUriInput, ListRedirectUrisInput, RedirectUri } from './schemas.ts';
import {
  clearDefaultRedirectUris,
  deleteRedirectUriRow,
  findRedirectUri,
  insertRedirectUri,
  loadRedirectUri,
  lockRedirectUrisOf,
  pageOfRedirectUris,
  type RedirectUriRow,
  setRedirectUriDefault,
} from './store.ts';

// An environment's redirect URIs (upstream `POST /user_management/redirect_uris`): where
// `/sso/authorize` may send the browser back with a code. Exact matches only, no wildcards.

export function toRedirectUri(row: RedirectUriRow): RedirectUri {
  return {
    object: 'redirect_uri',
    id: row.id,
    uri: row.uri,
    default: row.isDefault,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a URI cannot be a redirect URI, or undefined when it can: an absolute `https` URL, or `http`
 * on loopback only (`localhost`, `127.0.0.1`, `[::1]`, a `*.localhost` name); no fragment, no
 * user info, no wildcard (a registered URI is matched exactly).
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL.';
  }
  if (uri.includes('*')) return 'must not contain a wildcard: redirect URIs are matched exactly.';
  if (uri.includes('#')) return 'must not contain a fragment.';
  if (url.username || url.password) return 'must not contain user info.';
  const host = url.hostname.toLowerCase();
  const loopback = LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost');
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') return loopback ? undefined : 'must use https (http only for localhost or loopback).';
  return 'must use https (http only for localhost or loopback).';
}

/**
 * Registers a redirect URI of the environment (201). `default: true` makes it the one default
 * (the others lose it). The URI the environment has already: 409 `redirect_uri_already_exists`.
 */
export async function createRedirectUri(
  scope: Scope,
  input: z.infer<typeof CreateRedirectUriInput>,
): Promise<RedirectUri> {
  const problem = redirectUriProblem(input.uri);
  if (problem) {
    const message = `uri ${problem}`;
    throw invalid([{ field: 'uri', code: 'invalid_redirect_uri', message }], 'invalid_redirect_uri', message);
  }
  return scope.db.transaction(async (tx) => {
    await lockRedirectUrisOf(tx, scope.env.id);
    const now = scope.now();
    const isDefault = input.default ?? false;
    const row = await insertRedirectUri(tx, {
      id: newId('redirectUri'),
      environmentId: scope.env.id,
      uri: input.uri,
      isDefault,
      createdAt: now,
      updatedAt: now,
    });
    if (!row) throw conflict('redirect_uri_already_exists', `The redirect URI '${input.uri}' is registered already.`);
    if (isDefault) await clearDefaultRedirectUris(tx, scope.env.id, row.id, now);
    return toRedirectUri(row);
  });
}

export async function listRedirectUris(scope: Scope, input: z.infer<typeof ListRedirectUrisInput>) {
  return asList(await pageOfRedirectUris(scope.db, scope.env.id, pageParams(input)), toRedirectUri);
}

/** Makes a registered URI the default (or not), named by its id or its URI. */
export async function setDefaultRedirectUri(scope: Scope, ref: string, isDefault: boolean): Promise<RedirectUri> {
  return scope.db.transaction(async (tx) => {
    await lockRedirectUrisOf(tx, scope.env.id);
    const row = await resolve(scope, tx, ref);
    const now = scope.now();
    const updated = await setRedirectUriDefault(tx, row.id, isDefault, now);
    if (isDefault) await clearDefaultRedirectUris(tx, scope.env.id, row.id, now);
    return toRedirectUri(updated);
  });
}

async function resolve(scope: Scope, db: Scope['db'], ref: string): Promise<RedirectUriRow> {
  if (ref.startsWith('ruri_')) return loadRedirectUri(db, scope.env.id, ref);
  return orNotFound(await findRedirectUri(db, scope.env.id, ref), 'redirect_uri', ref);
}

/** Removes a redirect URI, named by its id or its URI (404 when the environment has none such). */
export async function deleteRedirectUri(scope: Scope, ref: string): Promise<RedirectUri> {
  return scope.db.transaction(async (tx) => {
    await lockRedirectUrisOf(tx, scope.env.id);
    const row = await resolve(scope, tx, ref);
    return toRedirectUri(orNotFound(await deleteRedirectUriRow(tx, scope.env.id, row.id), 'redirect_uri', ref));
  });
}
