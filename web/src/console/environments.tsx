import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { trpc } from './api.ts';
import { attempt, Badge, ErrorLine, Field, InlineForm, lastError, Table, time } from './ui.tsx';

export interface Env {
  id: string;
  name: string;
  client_id: string;
  flags: Record<string, boolean>;
}

/** A secret shown once: the page keeps it until the operator dismisses it. */
function ShownOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  return (
    <div className="notice" data-testid="shown-once">
      <strong>{label} (shown once, copy it now):</strong> <code>{secret}</code>{' '}
      <button type="button" className="secondary" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

export function EnvironmentsPage(props: { env: Env | undefined; environments: Env[] }) {
  const create = useMutation(trpc.admin.environments.create.mutationOptions());
  const setFlag = useMutation(trpc.admin.flags.set.mutationOptions());
  const [created, setCreated] = useState<string | undefined>(undefined);
  const { env } = props;
  return (
    <>
      <section>
        <h2>Environments</h2>
        <ErrorLine error={lastError(create, setFlag)} />
        {created ? <ShownOnce label="API key" secret={created} onDone={() => setCreated(undefined)} /> : null}
        <Table
          rows={props.environments}
          columns={[
            ['Name', (e) => e.name],
            ['Id', (e) => <code>{e.id}</code>],
            ['Client id', (e) => <code>{e.client_id}</code>],
            [
              'Flags',
              (e) => Object.entries(e.flags).map(([f, on]) => <Badge key={f} value={`${f}: ${on ? 'on' : 'off'}`} />),
            ],
          ]}
        />
        <InlineForm
          label="Create environment"
          name="create environment"
          onSubmit={async (v) => {
            const made = await attempt(create.mutateAsync({ name: v.name ?? '' }));
            if (made) setCreated(made.api_key);
            return made !== undefined;
          }}
        >
          <Field name="name" label="Environment name" required />
        </InlineForm>
      </section>
      {env ? (
        <section>
          <h2>Feature flags of {env.name}</h2>
          {['groups', 'agents'].map((flag) => (
            <label key={flag} style={{ flexDirection: 'row', gap: 6 }}>
              <input
                type="checkbox"
                checked={env.flags[flag] ?? false}
                onChange={(e) => setFlag.mutate({ environment: env.id, flag, enabled: e.target.checked })}
                aria-label={`flag ${flag}`}
              />
              {flag}
            </label>
          ))}
        </section>
      ) : null}
      {env ? <ApiKeys env={env} /> : null}
    </>
  );
}

function ApiKeys({ env }: { env: Env }) {
  const keys = useQuery(trpc.admin.apiKeys.list.queryOptions({ environment: env.id }));
  const create = useMutation(trpc.admin.apiKeys.create.mutationOptions());
  const revoke = useMutation(trpc.admin.apiKeys.revoke.mutationOptions());
  const [shown, setShown] = useState<string | undefined>(undefined);
  return (
    <section>
      <h2>API keys of {env.name}</h2>
      <ErrorLine error={keys.error ?? lastError(create, revoke)} />
      {shown ? <ShownOnce label="New API key" secret={shown} onDone={() => setShown(undefined)} /> : null}
      <button
        type="button"
        onClick={async () => {
          const made = await attempt(create.mutateAsync({ environment: env.id }));
          if (made) setShown(made.api_key);
        }}
      >
        Create API key
      </button>
      <Table
        rows={keys.data}
        columns={[
          ['Id', (k) => <code>{k.id}</code>],
          ['Prefix', (k) => <code>{k.key_prefix}…</code>],
          ['Created', (k) => time(k.created_at)],
          [
            'State',
            (k) =>
              k.revoked_at ? (
                `revoked ${time(k.revoked_at)}`
              ) : (
                <button
                  type="button"
                  className="danger"
                  onClick={() => revoke.mutate({ environment: env.id, id: k.id })}
                >
                  Revoke
                </button>
              ),
          ],
        ]}
      />
    </section>
  );
}
