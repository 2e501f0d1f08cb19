import type { AppRouter } from '@atrium/routers';
import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { createTRPCOptionsProxy } from '@trpc/tanstack-react-query';

/** The CSRF token of this tab's session: held in memory only (the session itself is an HttpOnly cookie). */
let csrfToken = '';

/** The query of this browser's console session: true while signed in (the page then shows the console). */
export const SESSION_KEY = ['console-session'] as const;

/**
 * The page's query cache. A call the server refuses for the session (signed out, expired) ends
 * the session on the page, which then asks for the token again. After any write but signing in
 * or out, the page's queries are read again: a write can change what several of them show.
 */
export const queryClient: QueryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } },
  queryCache: new QueryCache({ onError: (error) => endSessionIfRefused(error) }),
  mutationCache: new MutationCache({
    onError: (error) => endSessionIfRefused(error),
    onSettled: (_data, _error, _variables, _context, mutation) => {
      if (mutation.options.mutationKey?.[0] === SESSION_KEY[0]) return;
      return queryClient.invalidateQueries({ predicate: (query) => query.queryKey[0] !== SESSION_KEY[0] });
    },
  }),
});

function endSessionIfRefused(error: unknown): void {
  if (isSessionRefused(error)) queryClient.setQueryData(SESSION_KEY, false);
}

/** Every call carries the session cookie (same origin) and the CSRF header. */
const client = createTRPCClient<AppRouter>({
  links: [
    httpBatchLink({
      url: '/trpc',
      maxItems: 10,
      headers: () => ({ 'x-csrf-token': csrfToken }),
      fetch: (url, options) => fetch(url, { ...options, credentials: 'same-origin' }),
    }),
  ],
});

/** The typed admin API as TanStack Query options: `useQuery(trpc.admin.x.list.queryOptions(input))`. */
export const trpc = createTRPCOptionsProxy<AppRouter>({ client, queryClient });

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

/** `POST /console/session`: the admin token is sent once and forgotten; the cookie stands for it. */
export async function signIn(token: string): Promise<void> {
  const res = await fetch('/console/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token }),
    credentials: 'same-origin',
  });
  const body = await res.json();
  if (!res.ok) throw new Error(body.message ?? 'Sign-in failed.');
  csrfToken = body.csrf_token;
}

/** The session of this browser, if any (after a reload): keeps its CSRF token and answers true. */
export async function resumeSession(): Promise<boolean> {
  const res = await fetch('/console/session', { credentials: 'same-origin' });
  if (!res.ok) return false;
  csrfToken = (await res.json()).csrf_token;
  return true;
}

export async function signOut(): Promise<void> {
  await fetch('/console/session', {
    method: 'DELETE',
    headers: { 'x-csrf-token': csrfToken },
    credentials: 'same-origin',
  });
  csrfToken = '';
}
