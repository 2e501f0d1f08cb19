import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { attempt, Badge, ErrorLine, Field, InlineForm, lastError, Table, time } from './ui.tsx';

export function WebhooksPage({ env }: { env: Env }) {
  const endpoints = useQuery(trpc.admin.webhooks.list.queryOptions({ environment: env.id }));
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const create = useMutation(trpc.admin.webhooks.create.mutationOptions());
  const remove = useMutation(trpc.admin.webhooks.delete.mutationOptions());
  return (
    <>
      <section>
        <h2>Webhook endpoints</h2>
        <ErrorLine error={endpoints.error ?? lastError(create, remove)} />
        <Table
          rows={endpoints.data}
          columns={[
            [
              'URL',
              (w) => (
                <button type="button" className="secondary" onClick={() => setSelected(w.id)}>
                  {w.endpoint_url}
                </button>
              ),
            ],
            ['Events', (w) => w.events.join(', ')],
            ['Status', (w) => <Badge value={w.status} />],
            [
              '',
              (w) => (
                <button
                  type="button"
                  className="danger"
                  onClick={() => remove.mutate({ environment: env.id, id: w.id })}
                >
                  Delete
                </button>
              ),
            ],
          ]}
        />
        <InlineForm
          label="Create endpoint"
          name="create endpoint"
          onSubmit={async (v) => {
            const made = await attempt(create.mutateAsync({ environment: env.id, url: v.url ?? '' }));
            return made !== undefined;
          }}
        >
          <Field name="url" label="Endpoint URL" required />
        </InlineForm>
      </section>
      {selected ? <Deliveries env={env} endpointId={selected} /> : null}
    </>
  );
}

function Deliveries({ env, endpointId }: { env: Env; endpointId: string }) {
  const log = useQuery(trpc.admin.webhooks.deliveries.queryOptions({ environment: env.id, id: endpointId }));
  const resend = useMutation(trpc.admin.webhooks.resend.mutationOptions());
  return (
    <section>
      <h2>Delivery log</h2>
      <ErrorLine error={log.error ?? lastError(resend)} />
      <Table
        rows={log.data}
        empty="No deliveries yet."
        columns={[
          ['Event', (d) => <code>{d.event}</code>],
          ['Status', (d) => <Badge value={d.status} />],
          ['Attempts', (d) => d.attempts],
          ['Last', (d) => `${time(d.last_attempt_at)} ${d.last_status_code ?? d.last_error ?? ''}`],
          [
            '',
            (d) => (
              <button
                type="button"
                className="secondary"
                onClick={() => resend.mutate({ environment: env.id, delivery_id: d.id })}
              >
                Resend
              </button>
            ),
          ],
        ]}
      />
    </section>
  );
}

export function EventsPage({ env }: { env: Env }) {
  const [organization, setOrganization] = useState('');
  const events = useQuery(
    trpc.admin.events.list.queryOptions({ environment: env.id, limit: 50, organization_id: organization || undefined }),
  );
  return (
    <section>
      <h2>Event stream</h2>
      <InlineForm
        label="Filter"
        name="filter events"
        onSubmit={async (v) => {
          setOrganization(v.organization_id ?? '');
          return false;
        }}
      >
        <Field name="organization_id" label="Organization id" />
      </InlineForm>
      <button type="button" className="secondary" onClick={() => events.refetch()}>
        Refresh
      </button>
      <ErrorLine error={events.error} />
      <Table
        rows={events.data?.data}
        columns={[
          ['When', (e) => time(e.created_at)],
          ['Event', (e) => <code>{e.event}</code>],
          ['Actor', (e) => e.actor ?? 'system'],
          ['Reason', (e) => e.reason ?? ''],
          ['Data', (e) => <code>{JSON.stringify(e.data).slice(0, 160)}</code>],
        ]}
      />
    </section>
  );
}

export function SigningKeysPage({ env }: { env: Env }) {
  const keys = useQuery(trpc.admin.signingKeys.list.queryOptions({ environment: env.id }));
  // The public JWKS (no session call), read again after a write (a rotation) like the page's other queries.
  const jwks = useQuery({
    queryKey: ['jwks', env.client_id],
    queryFn: async () => {
      const res = await fetch(`/sso/jwks/${encodeURIComponent(env.client_id)}`, { cache: 'no-store' });
      return ((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    },
  });
  const rotate = useMutation(trpc.admin.signingKeys.rotate.mutationOptions());
  return (
    <section>
      <h2>Signing keys</h2>
      <ErrorLine error={keys.error ?? lastError(rotate)} />
      <button type="button" onClick={() => rotate.mutate({ environment: env.id })}>
        Rotate signing key
      </button>
      <Table
        rows={keys.data}
        columns={[
          ['kid', (k) => <code>{k.kid}</code>],
          ['Active from', (k) => time(k.active_from)],
          ['Retires', (k) => time(k.retires_at)],
          ['Signing', (k) => (k.signing ? <Badge value="active" /> : '')],
          ['Published', (k) => (k.published ? 'yes' : 'no')],
        ]}
      />
      <h2>JWKS</h2>
      <p className="muted">
        <code>/sso/jwks/{env.client_id}</code>
      </p>
      <ul data-testid="jwks-kids">
        {(jwks.data ?? []).map((kid) => (
          <li key={kid}>
            <code>{kid}</code>
          </li>
        ))}
      </ul>
    </section>
  );
}
