import { type FormEvent, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { isSessionRefused, messageOf, resumeSession, signIn, signOut, trpc } from './api.ts';
import { type Env, EnvironmentsPage } from './environments.tsx';
import { EventsPage, SigningKeysPage, WebhooksPage } from './operations.tsx';
import { OrganizationsPage } from './organizations.tsx';
import { ConnectionsPage, InvitationsPage, UsersPage } from './pages.tsx';
import { ErrorLine } from './ui.tsx';

const PAGES = {
  environments: 'Environments',
  organizations: 'Organizations',
  users: 'Users & memberships',
  invitations: 'Invitations',
  connections: 'Connections',
  webhooks: 'Webhooks',
  events: 'Events',
  keys: 'Signing keys',
} as const;
type Page = keyof typeof PAGES;

/** Sign-in: the admin token is sent once to /console/session and forgotten; the cookie stands for it. */
function SignIn({ done }: { done: () => void }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const token = String(new FormData(form).get('token') ?? '');
    form.reset();
    try {
      await signIn(token);
      done();
    } catch (e) {
      setError(messageOf(e));
    }
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
      <ErrorLine error={error} />
    </section>
  );
}

function Console({ signedOut }: { signedOut: () => void }) {
  const [page, setPage] = useState<Page>('environments');
  const [environments, setEnvironments] = useState<Env[]>([]);
  const [envId, setEnvId] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const load = () =>
    trpc.admin.environments.list.query().then(
      (list) => {
        setEnvironments(list);
        setEnvId((current) => current ?? list[0]?.id);
      },
      (e: unknown) => (isSessionRefused(e) ? signedOut() : setError(messageOf(e))),
    );
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once; pages call `load` after a change.
  useEffect(() => void load(), []);
  const env = environments.find((e) => e.id === envId);
  const body =
    page === 'environments' ? (
      <EnvironmentsPage env={env} environments={environments} changed={load} />
    ) : !env ? (
      <p className="muted">Create an environment first.</p>
    ) : (
      {
        organizations: <OrganizationsPage env={env} />,
        users: <UsersPage env={env} />,
        invitations: <InvitationsPage env={env} />,
        connections: <ConnectionsPage env={env} />,
        webhooks: <WebhooksPage env={env} />,
        events: <EventsPage env={env} />,
        keys: <SigningKeysPage env={env} />,
      }[page]
    );
  return (
    <>
      <header>
        <h1>Atrium console</h1>
        <select aria-label="Environment" value={envId ?? ''} onChange={(e) => setEnvId(e.target.value)}>
          {environments.map((e) => (
            <option key={e.id} value={e.id}>
              {e.name}
            </option>
          ))}
        </select>
        <span style={{ flex: 1 }} />
        <button type="button" className="secondary" onClick={() => signOut().then(signedOut)}>
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
        <ErrorLine error={error} />
        {body}
      </main>
    </>
  );
}

function App() {
  const [state, setState] = useState<'loading' | 'signed-in' | 'signed-out'>('loading');
  useEffect(() => {
    resumeSession().then((ok) => setState(ok ? 'signed-in' : 'signed-out'));
  }, []);
  if (state === 'loading') return null;
  if (state === 'signed-out') return <SignIn done={() => setState('signed-in')} />;
  return <Console signedOut={() => setState('signed-out')} />;
}

const root = document.getElementById('root');
if (root) createRoot(root).render(<App />);
