import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { ErrorLine, Table, time } from './ui.tsx';

const PAGE_SIZE = 20;

/**
 * Audit logs (issue #38): one organization's audit log events, newest recorded first, a page at a
 * time (the service's one pagination: `after` for older, `before` for newer), filtered by action.
 * Read-only, as the events are: nothing here edits or deletes one.
 */
export function AuditLogsPage({ env }: { env: Env }) {
  const organizations = useQuery(trpc.admin.organizations.search.queryOptions({ environment: env.id, query: '' }));
  const [organization, setOrganization] = useState('');
  const [action, setAction] = useState('');
  const [cursor, setCursor] = useState<{ after?: string; before?: string }>({});
  const events = useQuery({
    ...trpc.admin.auditLogs.list.queryOptions({
      environment: env.id,
      organization_id: organization,
      limit: PAGE_SIZE,
      order: 'desc',
      ...(action ? { action } : {}),
      ...cursor,
    }),
    enabled: organization !== '',
  });
  const stream = useQuery({
    ...trpc.admin.auditLogs.stream.queryOptions({ environment: env.id, organization_id: organization }),
    enabled: organization !== '',
  });
  const page = events.data;
  return (
    <section>
      <h2>Audit logs</h2>
      <label>
        Organization{' '}
        <select
          aria-label="Organization"
          value={organization}
          onChange={(e) => {
            setOrganization(e.target.value);
            setCursor({});
          }}
        >
          <option value="">Choose an organization</option>
          {(organizations.data ?? []).map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </label>{' '}
      <form
        aria-label="filter audit logs"
        style={{ display: 'inline' }}
        onSubmit={(e) => {
          e.preventDefault();
          setAction(String(new FormData(e.currentTarget).get('action') ?? '').trim());
          setCursor({});
        }}
      >
        <input name="action" aria-label="Action" placeholder="user.signed_in" />{' '}
        <button type="submit" className="secondary">
          Filter
        </button>
      </form>
      <ErrorLine error={events.error ?? organizations.error} />
      {organization ? (
        <>
          <p data-testid="console-log-stream">
            {stream.data
              ? `Log stream: ${stream.data.type}, ${stream.data.state}${stream.data.last_error ? `; last error: ${stream.data.last_error}` : ''}${stream.data.last_delivered_event_id ? `; last delivered ${stream.data.last_delivered_event_id}` : ''}`
              : stream.isSuccess
                ? 'No log stream: the organization sets one up in the admin portal (intent log_streams).'
                : ''}
          </p>
          <Table
            rows={page?.data}
            empty="No audit log events."
            columns={[
              ['Occurred', (e) => time(e.occurred_at)],
              ['Action', (e) => <code>{e.action}</code>],
              ['Actor', (e) => `${e.actor.name ?? e.actor.id} (${e.actor.type})`],
              ['Targets', (e) => e.targets.map((t) => `${t.type}:${t.name ?? t.id}`).join(', ')],
              ['Location', (e) => e.context.location],
              ['Id', (e) => <code>{e.id}</code>],
            ]}
          />
          <p>
            <button
              type="button"
              className="secondary"
              disabled={!page?.list_metadata.before}
              onClick={() => setCursor({ before: page?.list_metadata.before ?? undefined })}
            >
              Newer
            </button>{' '}
            <button
              type="button"
              className="secondary"
              disabled={!page?.list_metadata.after}
              onClick={() => setCursor({ after: page?.list_metadata.after ?? undefined })}
            >
              Older
            </button>
          </p>
        </>
      ) : (
        <p className="muted">Choose an organization to see its audit log events.</p>
      )}
    </section>
  );
}
