import { useMutation, useQuery } from '@tanstack/react-query';
import type { inferOutput } from '@trpc/tanstack-react-query';
import { useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { attempt, Badge, ErrorLine, Field, InlineForm, lastError, Table, time } from './ui.tsx';

type Organization = inferOutput<typeof trpc.admin.organizations.search>[number];

export function OrganizationsPage({ env }: { env: Env }) {
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const orgs = useQuery(trpc.admin.organizations.search.queryOptions({ environment: env.id, query }));
  const create = useMutation(trpc.admin.organizations.create.mutationOptions());
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
        <ErrorLine error={orgs.error ?? lastError(create)} />
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
            const made = await attempt(create.mutateAsync(input));
            if (made) setSelected(made.id);
            return made !== undefined;
          }}
        >
          <Field name="name" label="Organization name" required />
          <Field name="external_id" label="External id" />
        </InlineForm>
      </section>
      {org ? <OrganizationDetail env={env} org={org} /> : null}
    </>
  );
}

function OrganizationDetail({ env, org }: { env: Env; org: Organization }) {
  const addDomain = useMutation(trpc.admin.domains.create.mutationOptions());
  const [domainId, setDomainId] = useState<string | undefined>(undefined);
  const members = useQuery(
    trpc.admin.memberships.list.queryOptions({ environment: env.id, organization_id: org.id, limit: 100 }),
  );
  return (
    <>
      <section>
        <h2>Domains of {org.name}</h2>
        <ErrorLine error={lastError(addDomain)} />
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
            const made = await attempt(addDomain.mutateAsync(input));
            if (made) setDomainId(made.id);
            return made !== undefined;
          }}
        >
          <Field name="domain" label="Domain" required />
        </InlineForm>
      </section>
      {domainId ? <DomainDetail domainId={domainId} /> : null}
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

type DnsCheckView = inferOutput<typeof trpc.admin.domains.get>['domain']['dns_check'];

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
function DomainDetail({ domainId }: { domainId: string }) {
  const detail = useQuery(trpc.admin.domains.get.queryOptions({ domain_id: domainId }));
  const verify = useMutation(trpc.admin.domains.verifyManually.mutationOptions());
  const domain = detail.data?.domain;
  return (
    <section>
      <h2>Domain {domain?.domain}</h2>
      <ErrorLine error={detail.error ?? lastError(verify)} />
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
            const done = await attempt(verify.mutateAsync({ domain_id: domainId, reason: v.reason ?? '' }));
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
