import '@radix-ui/themes/styles.css';
import '@workos-inc/widgets/styles.css';
import './portal.css';
import {
  AdminPortalAuditLogStreaming,
  AdminPortalDomainVerification,
  AdminPortalSsoConnection,
  DirectorySync,
  WorkOsWidgets,
} from '@workos-inc/widgets';
import { createRoot } from 'react-dom/client';
import { watchAuditLogs } from './audit-logs.ts';
import { watchDirectories } from './directories.ts';
import { watchLogStreams } from './log-streams.ts';
import { watchSso } from './sso.ts';
import { watchStatus } from './status.ts';

// The admin portal page (rest-facade/src/portal.ts serves its HTML): the official widget of the
// session's intent, against this origin, with a portal token the page asks for with its session
// cookie and the CSRF token the HTML carries in a meta tag. No inline script anywhere.

const meta = (name: string) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
const csrf = meta('atrium-portal-csrf');
const intent = meta('atrium-portal-intent');

/** The widgets call this for a token (again after a 403, and before `exp`). */
async function authToken(): Promise<string> {
  const res = await fetch('/portal/session/token', {
    method: 'POST',
    headers: { 'X-CSRF-Token': csrf },
    credentials: 'same-origin',
  });
  if (!res.ok) throw new Error(`The admin portal session has ended (${res.status}).`);
  return ((await res.json()) as { token: string }).token;
}

const root = document.getElementById('portal-root');
const widgets = root ? createRoot(root) : undefined;
let version = 0;

/**
 * Renders the official widget of the intent; a new `key` remounts it, so a domain the page's own
 * form added is fetched (the widget refetches only after its own mutations).
 */
function renderWidget(): void {
  version += 1;
  widgets?.render(
    <WorkOsWidgets
      key={version}
      apiHostname={location.hostname}
      port={location.port ? Number(location.port) : null}
      https={location.protocol === 'https:'}
    >
      {intent === 'sso' ? (
        <AdminPortalSsoConnection authToken={authToken} />
      ) : intent === 'dsync' ? (
        <DirectorySync authToken={authToken} />
      ) : intent === 'log_streams' ? (
        <AdminPortalAuditLogStreaming authToken={authToken} />
      ) : (
        <AdminPortalDomainVerification authToken={authToken} />
      )}
    </WorkOsWidgets>,
  );
}
// The audit_logs page has no widget: its own table reads the events.
if (intent !== 'audit_logs') renderWidget();

const status = document.getElementById('portal-status');
if (status && intent === 'domain_verification') watchStatus(status, csrf, renderWidget);
if (status && intent === 'dsync') watchDirectories(status, csrf, renderWidget);
if (status && intent === 'sso') watchSso(status, csrf, renderWidget);
if (status && intent === 'log_streams') watchLogStreams(status, csrf, renderWidget);
if (status && intent === 'audit_logs') watchAuditLogs(status, csrf);
