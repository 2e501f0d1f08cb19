import '@radix-ui/themes/styles.css';
import '@workos-inc/widgets/styles.css';
import {
  AdminPortalDomainVerification,
  AdminPortalSsoConnection,
  ApiKeys,
  DirectorySync,
  OrganizationSwitcher,
  UserProfile,
  UserSecurity,
  UserSessions,
  UsersManagement,
  WorkOsWidgets,
} from '@workos-inc/widgets';
import type { ReactNode } from 'react';
import { createRoot } from 'react-dom/client';

// The official widgets, unchanged, as a host application embeds them. The query chooses the
// widget (`widget`), the API (`api`: an origin other than this page's, so CORS is real) and the
// token: `token` as a string, else a function that asks this page's server for a fresh one.

const query = new URLSearchParams(location.search);
const api = new URL(query.get('api') ?? 'http://127.0.0.1:8080');
const widget = query.get('widget') ?? 'users-management';
const fixedToken = query.get('token');

/** The token function the widgets call (again after a 403): a fresh token from the test. */
async function fetchToken(): Promise<string> {
  const res = await fetch(`/widgets-token?widget=${encodeURIComponent(widget)}`, { method: 'POST' });
  if (!res.ok) throw new Error(`token: ${res.status}`);
  return res.text();
}

const authToken = fixedToken ?? fetchToken;

/** What the page did that the API does not see: switchToOrganization calls, read by the test. */
const recorded: { switched: string[] } = { switched: [] };
(window as unknown as { atrium: typeof recorded }).atrium = recorded;

function chosen(): ReactNode {
  switch (widget) {
    case 'users-management':
      return <UsersManagement authToken={authToken} />;
    case 'organization-switcher':
      return (
        <OrganizationSwitcher
          authToken={authToken}
          switchToOrganization={({ organizationId }) => {
            recorded.switched.push(organizationId);
          }}
        />
      );
    case 'user-sessions':
      return fixedToken ? (
        <UserSessions authToken={fixedToken} currentSessionId={query.get('session') ?? ''} />
      ) : (
        <UserSessions authToken={fetchToken} />
      );
    case 'domain-verification':
      return <AdminPortalDomainVerification authToken={authToken} />;
    case 'sso-connection':
      return <AdminPortalSsoConnection authToken={authToken} />;
    case 'directory-sync':
      return <DirectorySync authToken={authToken} />;
    case 'api-keys':
      return <ApiKeys authToken={authToken} />;
    case 'user-api-keys':
      return <ApiKeys authToken={authToken} scope="user" />;
    case 'user-profile':
      return <UserProfile authToken={authToken} />;
    case 'user-security':
      return <UserSecurity authToken={authToken} />;
    default:
      return <p>Unknown widget {widget}</p>;
  }
}

const root = document.getElementById('root');
if (!root) throw new Error('no #root');
createRoot(root).render(
  <WorkOsWidgets apiHostname={api.hostname} port={api.port ? Number(api.port) : null} https={api.protocol === 'https:'}>
    <main data-widget={widget}>{chosen()}</main>
  </WorkOsWidgets>,
);
