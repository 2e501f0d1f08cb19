import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';

/** The CSRF token of this tab's session: held in memory only (the session itself is an HttpOnly cookie). */
let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** The typed admin client: every call carries the session cookie (same origin) and the CSRF header. */
export const trpc = createTRPCClient<AppRouter>({
  links: [
    httpBatchLink({
      url: '/trpc',
      maxItems: 10,
      headers: () => ({ 'x-csrf-token': csrfToken }),
      fetch: (url, options) => fetch(url, { ...options, credentials: 'same-origin' }),
    }),
  ],
});

/** The contract's message of a failed call, for the page. */
export function messageOf(error: unknown): string {
  if (error instanceof TRPCClientError) {
    const contract = (error.data as { contract?: { body?: { message?: string; errors?: { message: string }[] } } })
      ?.contract?.body;
    const fields = contract?.errors?.map((e) => e.message).join('; ');
    return [contract?.message ?? error.message, fields].filter(Boolean).join(' ');
  }
  return error instanceof Error ? error.message : String(error);
}

/** Is this a refusal of the session (signed out, expired)? The page then asks to sign in again. */
export function isSessionRefused(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as { httpStatus?: number } | undefined)?.httpStatus === 401;
}

export async function signIn(token: string): Promise<void> {
  const res = await fetch('/console/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token }),
    credentials: 'same-origin',
  });
  const body = await res.json();
  if (!res.ok) throw new Error(body.message ?? 'Sign-in failed.');
  setCsrfToken(body.csrf_token);
}

/** The session of this browser, if any (after a reload): sets the CSRF token and answers true. */
export async function resumeSession(): Promise<boolean> {
  const res = await fetch('/console/session', { credentials: 'same-origin' });
  if (!res.ok) return false;
  setCsrfToken((await res.json()).csrf_token);
  return true;
}

export async function signOut(): Promise<void> {
  await fetch('/console/session', {
    method: 'DELETE',
    headers: { 'x-csrf-token': csrfToken },
    credentials: 'same-origin',
  });
  setCsrfToken('');
}
