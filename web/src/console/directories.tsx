import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { attempt, Badge, ErrorLine, Field, InlineForm, lastError, Table } from './ui.tsx';

/** The directory types an operator usually creates (upstream's names); the CLI takes any of upstream's. */
const TYPES = ['okta scim v2.0', 'azure scim v2.0', 'generic scim v2.0', 'onelogin scim v2.0', 'jump cloud scim v2.0'];

interface Shown {
  label: string;
  scim_base_url: string;
  bearer_token: string;
}

/** A directory's SCIM base URL and token, shown once (after a create or a rotation) until dismissed. */
function ShownOnce({ shown, onDone }: { shown: Shown; onDone: () => void }) {
  return (
    <div className="notice" data-testid="shown-once">
      <strong>{shown.label} (the token is shown once, copy it now):</strong>
      <p>
        SCIM base URL <code data-testid="scim-base-url">{shown.scim_base_url}</code>
      </p>
      <p>
        Bearer token <code data-testid="bearer-token">{shown.bearer_token}</code>
      </p>
      <button type="button" className="secondary" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

/**
 * Directories (SCIM directory sync, issue #36): an organization's directories, one created with
 * its base URL and token shown once, a token rotated, a directory deleted, its groups mapped to roles.
 */
export function DirectoriesPage({ env }: { env: Env }) {
  const organizations = useQuery(trpc.admin.organizations.search.queryOptions({ environment: env.id, query: '' }));
  const [organization, setOrganization] = useState('');
  const directories = useQuery(
    trpc.admin.directories.list.queryOptions({
      environment: env.id,
      limit: 100,
      order: 'desc',
      ...(organization ? { organization_id: organization } : {}),
    }),
  );
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [shown, setShown] = useState<Shown | undefined>(undefined);
  const create = useMutation(trpc.admin.directories.create.mutationOptions());
  const rotate = useMutation(trpc.admin.directories.rotateToken.mutationOptions());
  const remove = useMutation(trpc.admin.directories.delete.mutationOptions());
  const chosen = directories.data?.data.find((d) => d.id === selected);
  return (
    <>
      <section>
        <h2>Directories</h2>
        <label>
          Organization{' '}
          <select aria-label="Organization" value={organization} onChange={(e) => setOrganization(e.target.value)}>
            <option value="">All organizations</option>
            {(organizations.data ?? []).map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </label>
        <ErrorLine error={directories.error ?? organizations.error ?? lastError(create, rotate, remove)} />
        {shown ? <ShownOnce shown={shown} onDone={() => setShown(undefined)} /> : null}
        <Table
          rows={directories.data?.data}
          empty="No directories yet."
          columns={[
            [
              'Name',
              (d) => (
                <button type="button" className="secondary" onClick={() => setSelected(d.id)}>
                  {d.name}
                </button>
              ),
            ],
            ['Type', (d) => d.type],
            ['State', (d) => <Badge value={d.state} />],
            [
              'Users',
              (d) => (d.metadata ? `${d.metadata.users.active} active, ${d.metadata.users.inactive} inactive` : ''),
            ],
            ['Groups', (d) => d.metadata?.groups ?? ''],
            ['Id', (d) => <code>{d.id}</code>],
            [
              '',
              (d) => (
                <>
                  <button
                    type="button"
                    className="secondary"
                    onClick={async () => {
                      const rotated = await attempt(rotate.mutateAsync({ directory_id: d.id }));
                      if (rotated) setShown({ label: `New token of ${rotated.name}`, ...rotated });
                    }}
                  >
                    Rotate token
                  </button>{' '}
                  <button type="button" className="danger" onClick={() => remove.mutate({ directory_id: d.id })}>
                    Delete
                  </button>
                </>
              ),
            ],
          ]}
        />
        {organization ? (
          <InlineForm
            label="Create directory"
            name="create directory"
            onSubmit={async (v) => {
              const made = await attempt(
                create.mutateAsync({
                  environment: env.id,
                  organization_id: organization,
                  name: v.name ?? '',
                  type: (v.type ?? 'okta scim v2.0') as 'okta scim v2.0',
                }),
              );
              if (made) setShown({ label: `Directory ${made.name}`, ...made });
              return made !== undefined;
            }}
          >
            <Field name="name" label="Directory name" required />
            <label>
              Type
              <select name="type" aria-label="Directory type" defaultValue="okta scim v2.0">
                {TYPES.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
            </label>
          </InlineForm>
        ) : (
          <p className="muted">Choose an organization to create a directory for it.</p>
        )}
      </section>
      {chosen ? <DirectoryGroups directoryId={chosen.id} name={chosen.name} /> : null}
    </>
  );
}

/** A directory's groups, each with the role its members get (the group -> role mapping). */
function DirectoryGroups({ directoryId, name }: { directoryId: string; name: string }) {
  const groups = useQuery(trpc.admin.directories.groups.queryOptions({ directory_id: directoryId }));
  const map = useMutation(trpc.admin.directories.mapGroup.mutationOptions());
  return (
    <section>
      <h2>Groups of {name}</h2>
      <p className="muted">
        Members of a mapped group get its role in the organization; without a mapped group, the default role.
      </p>
      <ErrorLine error={groups.error ?? lastError(map)} />
      <Table
        rows={groups.data}
        empty="No groups pushed yet."
        columns={[
          ['Group', (g) => g.name],
          ['Role', (g) => (g.role_slug ? <code>{g.role_slug}</code> : <span className="muted">none</span>)],
          [
            'Map to role',
            (g) => (
              <InlineForm
                label="Map"
                name={`map ${g.name}`}
                onSubmit={async (v) => {
                  const mapped = await attempt(map.mutateAsync({ group_id: g.id, role_slug: v.role_slug || null }));
                  return mapped !== undefined;
                }}
              >
                <Field name="role_slug" label={`Role of ${g.name}`} placeholder="role slug (empty: none)" />
              </InlineForm>
            ),
          ],
        ]}
      />
    </section>
  );
}
