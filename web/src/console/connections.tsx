import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { attempt, Badge, ErrorLine, Field, InlineForm, lastError, Table, time } from './ui.tsx';

// The console's Connections page (issue #37): the environment's connections; one chosen shows what
// to paste into the identity provider (ACS URL, entity ID, metadata URL, or the OIDC redirect URI),
// its configuration (IdP, certificates, options; never a secret) and a form that configures it
// through the same admin procedures as the CLI. Below, the environment's redirect URIs.

const isSaml = (type: string) => type.endsWith('SAML');
const isOidc = (type: string) => /oidc$/i.test(type);

/** Reads a submitted form's fields by name. */
const valuesOf = (event: FormEvent<HTMLFormElement>) => {
  event.preventDefault();
  const data = new FormData(event.currentTarget);
  const text = (name: string) => String(data.get(name) ?? '').trim();
  return { text, checked: (name: string) => data.get(name) === 'on' };
};

function Fact({ label, value, id }: { label: string; value: string | undefined; id: string }) {
  if (!value) return null;
  return (
    <p>
      {label}: <code data-testid={id}>{value}</code>
    </p>
  );
}

function ConnectionDetail({ id }: { id: string }) {
  const detail = useQuery(trpc.admin.connections.get.queryOptions({ connection_id: id }));
  const saml = useMutation(trpc.admin.connections.configureSaml.mutationOptions());
  const oidc = useMutation(trpc.admin.connections.configureOidc.mutationOptions());
  const c = detail.data;
  if (!c) return <ErrorLine error={detail.error} />;
  const config = c.configuration;
  const submitSaml = async (event: FormEvent<HTMLFormElement>) => {
    const form = event.currentTarget;
    const { text, checked } = valuesOf(event);
    const input: Parameters<typeof saml.mutateAsync>[0] = {
      connection_id: id,
      sign_requests: checked('sign_requests'),
      idp_initiated_enabled: checked('idp_initiated_enabled'),
    };
    if (text('idp_metadata_xml')) input.idp_metadata_xml = text('idp_metadata_xml');
    else if (text('idp_metadata_url')) input.idp_metadata_url = text('idp_metadata_url');
    if ((await attempt(saml.mutateAsync(input))) !== undefined) form.reset();
  };
  const submitOidc = async (event: FormEvent<HTMLFormElement>) => {
    const form = event.currentTarget;
    const { text } = valuesOf(event);
    const input: Parameters<typeof oidc.mutateAsync>[0] = {
      connection_id: id,
      discovery_endpoint: text('discovery_endpoint'),
      client_id: text('client_id'),
    };
    if (text('client_secret')) input.client_secret = text('client_secret');
    if (text('scopes')) input.scopes = text('scopes').split(/\s+/);
    if ((await attempt(oidc.mutateAsync(input))) !== undefined) form.reset();
  };
  return (
    <section data-testid="connection-detail">
      <h2>
        {c.name} <Badge value={c.state} />
      </h2>
      <ErrorLine error={detail.error ?? lastError(saml, oidc)} />
      <h3>Give these to the identity provider</h3>
      <Fact label="ACS URL" value={c.saml_acs_url} id="saml-acs-url" />
      <Fact label="SP entity ID" value={c.saml_sp_entity_id} id="saml-sp-entity-id" />
      <Fact label="SP metadata URL" value={c.saml_sp_metadata_url} id="saml-sp-metadata-url" />
      <Fact label="Redirect URI" value={c.oidc_redirect_uri} id="oidc-redirect-uri" />
      <p>Last sign-in: {time(config.last_sign_in_at)}</p>
      {config.saml ? (
        <>
          <h3>Identity provider</h3>
          <p>
            Entity ID: <code data-testid="idp-entity-id">{config.saml.idp_entity_id ?? '—'}</code>; sign-in URL:{' '}
            <code>{config.saml.idp_sso_url ?? '—'}</code>; signed requests: {config.saml.sign_requests ? 'yes' : 'no'}
            {', '}IdP-initiated: {config.saml.idp_initiated_enabled ? 'allowed' : 'off'}
          </p>
          <Table
            rows={config.saml.idp_certificates}
            empty="No IdP certificate yet."
            columns={[
              ['Certificate (SHA-256)', (cert) => <code>{cert.fingerprint_sha256}</code>],
              ['Valid from', (cert) => time(cert.not_before)],
              ['Expires', (cert) => time(cert.not_after)],
            ]}
          />
        </>
      ) : null}
      {config.oidc ? (
        <>
          <h3>OpenID provider</h3>
          <p>
            Issuer: <code data-testid="oidc-issuer">{config.oidc.issuer ?? '—'}</code>; client ID:{' '}
            <code>{config.oidc.client_id ?? '—'}</code>; secret: {config.oidc.client_secret_set ? 'set' : 'none'}
            {', '}scopes: {config.oidc.scopes.join(' ')}
          </p>
        </>
      ) : null}
      {isSaml(c.connection_type) ? (
        <form className="inline" aria-label="configure saml" onSubmit={submitSaml}>
          <label>
            IdP metadata XML
            <textarea name="idp_metadata_xml" rows={4} aria-label="IdP metadata XML" />
          </label>
          <Field name="idp_metadata_url" label="IdP metadata URL" />
          <label>
            <input
              type="checkbox"
              name="sign_requests"
              aria-label="Sign requests"
              defaultChecked={config.saml?.sign_requests}
            />{' '}
            Sign requests
          </label>
          <label>
            <input
              type="checkbox"
              name="idp_initiated_enabled"
              aria-label="Allow IdP-initiated sign-in"
              defaultChecked={config.saml?.idp_initiated_enabled}
            />{' '}
            Allow IdP-initiated sign-in
          </label>
          <button type="submit">Save SAML configuration</button>
        </form>
      ) : null}
      {isOidc(c.connection_type) ? (
        <form className="inline" aria-label="configure oidc" onSubmit={submitOidc}>
          <Field name="discovery_endpoint" label="Discovery endpoint" required />
          <Field name="client_id" label="Client ID" required />
          <label>
            Client secret
            <input name="client_secret" type="password" aria-label="Client secret" autoComplete="off" />
          </label>
          <Field name="scopes" label="Scopes" placeholder="openid profile email" />
          <button type="submit">Save OIDC configuration</button>
        </form>
      ) : null}
    </section>
  );
}

function RedirectUris({ env }: { env: Env }) {
  const uris = useQuery(trpc.admin.redirectUris.list.queryOptions({ environment: env.id, limit: 100 }));
  const create = useMutation(trpc.admin.redirectUris.create.mutationOptions());
  const setDefault = useMutation(trpc.admin.redirectUris.setDefault.mutationOptions());
  const remove = useMutation(trpc.admin.redirectUris.delete.mutationOptions());
  return (
    <section>
      <h2>Redirect URIs</h2>
      <p className="muted">Where sign-ins return with a code; the default one serves requests that name none.</p>
      <ErrorLine error={uris.error ?? lastError(create, setDefault, remove)} />
      <Table
        rows={uris.data?.data}
        empty="No redirect URIs yet."
        columns={[
          ['URI', (u) => <code>{u.uri}</code>],
          ['', (u) => (u.default ? <Badge value="default" /> : null)],
          [
            '',
            (u) => (
              <>
                {u.default ? null : (
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => setDefault.mutate({ environment: env.id, uri: u.uri, default: true })}
                  >
                    Make default
                  </button>
                )}{' '}
                <button
                  type="button"
                  className="danger"
                  onClick={() => remove.mutate({ environment: env.id, uri: u.uri })}
                >
                  Remove
                </button>
              </>
            ),
          ],
        ]}
      />
      <InlineForm
        label="Add redirect URI"
        name="add redirect uri"
        onSubmit={async (v) => {
          const made = await attempt(
            create.mutateAsync({ environment: env.id, uri: v.uri ?? '', default: v.default === 'on' }),
          );
          return made !== undefined;
        }}
      >
        <Field name="uri" label="Redirect URI" required placeholder="https://app.example.com/callback" />
        <label>
          <input type="checkbox" name="default" aria-label="Default" /> Default
        </label>
      </InlineForm>
    </section>
  );
}

export function ConnectionsPage({ env }: { env: Env }) {
  const connections = useQuery(trpc.admin.connections.list.queryOptions({ environment: env.id, limit: 100 }));
  const types = useQuery(trpc.admin.connections.types.queryOptions());
  const create = useMutation(trpc.admin.connections.create.mutationOptions());
  const remove = useMutation(trpc.admin.connections.delete.mutationOptions());
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  return (
    <>
      <section>
        <h2>Connections</h2>
        <ErrorLine error={connections.error ?? lastError(create, remove)} />
        <Table
          rows={connections.data?.data}
          columns={[
            [
              'Name',
              (c) => (
                <button type="button" className="secondary" onClick={() => setChosen(c.id)}>
                  {c.name}
                </button>
              ),
            ],
            ['Type', (c) => c.connection_type],
            ['Organization', (c) => <code>{c.organization_id}</code>],
            ['State', (c) => <Badge value={c.state} />],
            [
              '',
              (c) => (
                <button
                  type="button"
                  className="danger"
                  onClick={() => {
                    if (chosen === c.id) setChosen(undefined);
                    remove.mutate({ connection_id: c.id });
                  }}
                >
                  Delete
                </button>
              ),
            ],
          ]}
        />
        <InlineForm
          label="Create connection"
          name="create connection"
          onSubmit={async (v) => {
            const input = {
              environment: env.id,
              organization_id: v.organization_id ?? '',
              name: v.name ?? '',
              connection_type: (v.connection_type ?? 'GenericSAML') as 'GenericSAML',
            };
            const made = await attempt(create.mutateAsync(input));
            if (made) setChosen(made.id);
            return made !== undefined;
          }}
        >
          <Field name="organization_id" label="Organization id" required />
          <Field name="name" label="Name" required />
          <label>
            Type
            <select name="connection_type" aria-label="Type" defaultValue="GenericSAML">
              {(types.data ?? ['GenericSAML']).map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
        </InlineForm>
      </section>
      {chosen ? <ConnectionDetail key={chosen} id={chosen} /> : null}
      <RedirectUris env={env} />
    </>
  );
}
