import { QueryClientProvider, useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { queryClient, resumeSession, SESSION_KEY, signIn, signOut, trpc } from './api.ts';
import { AuditLogsPage } from './audit-logs.tsx';
import { ConnectionsPage } from './connections.tsx';
import { DirectoriesPage } from './directories.tsx';
import { EnvironmentsPage } from './environments.tsx';
import { EventsPage, SigningKeysPage, WebhooksPage } from './operations.tsx';
import { OrganizationsPage } from './organizations.tsx';
import { InvitationsPage, UsersPage } from './pages.tsx';
import { ErrorLine } from './ui.tsx';

const PAGES = {
  environments: 'Environments',
  organizations: 'Organizations',
  users: 'Users & memberships',
  invitations: 'Invitations',
  connections: 'Connections',
  directories: 'Directories',
  auditLogs: 'Audit logs',
  webhooks: 'Webhooks',
  events: 'Events',
  keys: 'Signing keys',
} as const;
type Page = keyof typeof PAGES;

/** Sign-in: the admin token is sent once to /console/session and forgotten; the cookie stands for it. */
function SignIn() {
  const session = useMutation({
    mutationKey: SESSION_KEY,
    mutationFn: signIn,
    onSuccess: () => queryClient.setQueryData(SESSION_KEY, true),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const token = String(new FormData(form).get('token') ?? '');
    form.reset();
    session.mutate(token);
  };
  return (
    <section className="signin">
      <h2>Atrium console</h2>
      <p className="muted">Paste the admin token (printed by the first `npm start`, or ATRIUM_ADMIN_TOKEN).</p>
      <form onSubmit={submit} aria-label="sign in">
        <input name="token" type="password" autoComplete="off" aria-label="Admin token" required />
        <p>
          <button type="submit">Sign in</button>
        </p>
      </form>
      <ErrorLine error={session.error} />
    </section>
  );
}

function Console() {
  const [page, setPage] = useState<Page>('environments');
  const list = useQuery(trpc.admin.environments.list.queryOptions());
  const environments = list.data ?? [];
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const envId = chosen ?? environments[0]?.id;
  const leave = useMutation({
    mutationKey: SESSION_KEY,
    mutationFn: signOut,
    onSettled: () => queryClient.setQueryData(SESSION_KEY, false),
  });
  const env = environments.find((e) => e.id === envId);
  const body =
    page === 'environments' ? (
      <EnvironmentsPage env={env} environments={environments} />
    ) : !env ? (
      <p className="muted">Create an environment first.</p>
    ) : (
      {
        organizations: <OrganizationsPage env={env} />,
        users: <UsersPage env={env} />,
        invitations: <InvitationsPage env={env} />,
        connections: <ConnectionsPage env={env} />,
        directories: <DirectoriesPage env={env} />,
        auditLogs: <AuditLogsPage env={env} />,
        webhooks: <WebhooksPage env={env} />,
        events: <EventsPage env={env} />,
        keys: <SigningKeysPage env={env} />,
      }[page]
    );
  return (
    <>
      <header>
        <h1>Atrium console</h1>
        <select aria-label="Environment" value={envId ?? ''} onChange={(e) => setChosen(e.target.value)}>
          {environments.map((e) => (
            <option key={e.id} value={e.id}>
              {e.name}
            </option>
          ))}
        </select>
        <span style={{ flex: 1 }} />
        <button type="button" className="secondary" onClick={() => leave.mutate()}>
          Sign out
        </button>
      </header>
      <nav>
        {(Object.keys(PAGES) as Page[]).map((p) => (
          <button key={p} type="button" className={p === page ? 'active' : ''} onClick={() => setPage(p)}>
            {PAGES[p]}
          </button>
        ))}
      </nav>
      <main>
        <ErrorLine error={list.error} />
        {body}
      </main>
    </>
  );
}

/** The session decides the page: the console, or the sign-in form (a refused call ends it, api.ts). */
function App() {
  const session = useQuery({ queryKey: SESSION_KEY, queryFn: resumeSession, staleTime: Number.POSITIVE_INFINITY });
  const signedOut = session.data === false;
  // Nothing read under a session outlives it: the next sign-in reads afresh.
  useEffect(() => {
    if (signedOut) queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== SESSION_KEY[0] });
  }, [signedOut]);
  if (session.isPending) return null;
  return session.data ? <Console /> : <SignIn />;
}

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>,
  );
