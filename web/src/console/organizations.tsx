import { useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { Badge, ErrorLine, Field, InlineForm, Table, time, useAction, useLoad } from './ui.tsx';

type Organizations = Awaited<ReturnType<typeof trpc.admin.organizations.search.query>>;
type Organization = Organizations[number];

export function OrganizationsPage({ env }: { env: Env }) {
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const orgs = useLoad(() => trpc.admin.organizations.search.query({ environment: env.id, query }), [env.id, query]);
  const action = useAction();
  const org = orgs.data?.find((o) => o.id === selected);
  return (
    <>
      <section>
        <h2>Organizations</h2>
        <InlineForm
          label="Search"
          name="search organizations"
          onSubmit={async (v) => {
            setQuery(v.query ?? '');
            return false;
          }}
        >
          <Field name="query" label="Name, external id, id or domain" />
        </InlineForm>
        <ErrorLine error={orgs.error ?? action.error} />
        <Table
          rows={orgs.data}
          empty="No organization matches."
          columns={[
            [
              'Name',
              (o: Organization) => (
                <button type="button" className="secondary" onClick={() => setSelected(o.id)}>
                  {o.name}
                </button>
              ),
            ],
            ['Id', (o) => <code>{o.id}</code>],
            ['External id', (o) => o.external_id ?? '—'],
            ['Domains', (o) => o.domains.map((d) => `${d.domain} (${d.state})`).join(', ') || '—'],
          ]}
        />
        <InlineForm
          label="Create organization"
          name="create organization"
          onSubmit={async (v) => {
            const input = { environment: env.id, name: v.name ?? '', external_id: v.external_id || undefined };
            const made = await action.run(() => trpc.admin.organizations.create.mutate(input));
            if (made) setSelected(made.id);
            orgs.reload();
            return made !== undefined;
          }}
        >
          <Field name="name" label="Organization name" required />
          <Field name="external_id" label="External id" />
        </InlineForm>
      </section>
      {org ? <OrganizationDetail env={env} org={org} changed={orgs.reload} /> : null}
    </>
  );
}

function OrganizationDetail({ env, org, changed }: { env: Env; org: Organization; changed: () => void }) {
  const action = useAction();
  const [domainId, setDomainId] = useState<string | undefined>(undefined);
  const members = useLoad(
    () => trpc.admin.memberships.list.query({ environment: env.id, organization_id: org.id, limit: 100 }),
    [env.id, org.id],
  );
  return (
    <>
      <section>
        <h2>Domains of {org.name}</h2>
        <ErrorLine error={action.error} />
        <Table
          rows={org.domains}
          columns={[
            ['Domain', (d) => d.domain],
            ['State', (d) => <Badge value={d.state} />],
            ['Strategy', (d) => d.verification_strategy],
            [
              '',
              (d) => (
                <button type="button" className="secondary" onClick={() => setDomainId(d.id)}>
                  Open {d.domain}
                </button>
              ),
            ],
          ]}
        />
        <InlineForm
          label="Add domain"
          name="add domain"
          onSubmit={async (v) => {
            const input = { environment: env.id, organization_id: org.id, domain: v.domain ?? '' };
            const made = await action.run(() => trpc.admin.domains.create.mutate(input));
            if (made) setDomainId(made.id);
            changed();
            return made !== undefined;
          }}
        >
          <Field name="domain" label="Domain" required />
        </InlineForm>
      </section>
      {domainId ? <DomainDetail domainId={domainId} changed={changed} /> : null}
      <section>
        <h2>Members of {org.name}</h2>
        <ErrorLine error={members.error} />
        <Table
          rows={members.data?.data}
          empty="No members."
          columns={[
            ['User', (m) => <code>{m.user_id}</code>],
            ['Roles', (m) => m.roles?.map((r) => r.slug).join(', ') ?? m.role?.slug],
            ['Status', (m) => <Badge value={m.status} />],
          ]}
        />
      </section>
    </>
  );
}

type DnsCheckView = Awaited<ReturnType<typeof trpc.admin.domains.get.query>>['domain']['dns_check'];

/** What the DNS worker last saw: when, how often, what was wrong, and the zone's name servers. */
function DnsCheck({ check }: { check: DnsCheckView }) {
  return (
    <p>
      DNS checks {check.attempts}
      {check.last_checked_at ? ` · last ${time(check.last_checked_at)}` : ''}
      {check.error ? ` · ${check.error}` : ''}
      {check.next_check_at ? ` · next ${time(check.next_check_at)}` : ''} · name servers{' '}
      {check.name_servers.length > 0 ? <code>{check.name_servers.join(' ')}</code> : 'not found yet'}
    </p>
  );
}

/** One domain: its state, its DNS checks, its verification history, and manual verification with a required reason. */
function DomainDetail({ domainId, changed }: { domainId: string; changed: () => void }) {
  const detail = useLoad(() => trpc.admin.domains.get.query({ domain_id: domainId }), [domainId]);
  const action = useAction();
  const domain = detail.data?.domain;
  return (
    <section>
      <h2>Domain {domain?.domain}</h2>
      <ErrorLine error={detail.error ?? action.error} />
      {domain ? (
        <p>
          State <Badge value={domain.state} /> · strategy {domain.verification_strategy} · TXT record{' '}
          <code>
            {domain.verification_prefix}.{domain.domain}
          </code>
        </p>
      ) : null}
      {domain ? <DnsCheck check={domain.dns_check} /> : null}
      {domain && domain.state !== 'verified' ? (
        <InlineForm
          label="Verify manually"
          name="verify manually"
          onSubmit={async (v) => {
            const done = await action.run(() =>
              trpc.admin.domains.verifyManually.mutate({ domain_id: domainId, reason: v.reason ?? '' }),
            );
            detail.reload();
            changed();
            return done !== undefined;
          }}
        >
          <Field name="reason" label="Reason (required, recorded on the event)" required />
        </InlineForm>
      ) : null}
      <h2>Verification history</h2>
      <Table
        rows={detail.data?.history}
        columns={[
          ['When', (e) => time(e.created_at)],
          ['Event', (e) => <code>{e.event}</code>],
          ['Actor', (e) => e.actor ?? 'system'],
          ['Reason', (e) => e.reason ?? ''],
        ]}
      />
    </section>
  );
}
