import { useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { Badge, ErrorLine, Field, InlineForm, Table, time, useAction, useLoad } from './ui.tsx';

export function UsersPage({ env }: { env: Env }) {
  const users = useLoad(() => trpc.admin.users.list.query({ environment: env.id, limit: 100 }), [env.id]);
  const [userId, setUserId] = useState<string | undefined>(undefined);
  const memberships = useLoad(
    async () =>
      userId
        ? (await trpc.admin.memberships.list.query({ environment: env.id, user_id: userId, limit: 100 })).data
        : [],
    [env.id, userId],
  );
  const action = useAction();
  return (
    <>
      <section>
        <h2>Users</h2>
        <ErrorLine error={users.error ?? action.error} />
        <Table
          rows={users.data?.data}
          columns={[
            [
              'E-mail',
              (u) => (
                <button type="button" className="secondary" onClick={() => setUserId(u.id)}>
                  {u.email}
                </button>
              ),
            ],
            ['Id', (u) => <code>{u.id}</code>],
            ['Name', (u) => [u.first_name, u.last_name].filter(Boolean).join(' ') || '—'],
            ['Created', (u) => time(u.created_at)],
          ]}
        />
        <InlineForm
          label="Create user"
          name="create user"
          onSubmit={async (v) => {
            const made = await action.run(() =>
              trpc.admin.users.create.mutate({ environment: env.id, email: v.email ?? '' }),
            );
            users.reload();
            return made !== undefined;
          }}
        >
          <Field name="email" label="E-mail" required />
        </InlineForm>
      </section>
      {userId ? (
        <section>
          <h2>Memberships of {userId}</h2>
          <ErrorLine error={memberships.error} />
          <Table
            rows={memberships.data}
            empty="No memberships."
            columns={[
              ['Organization', (m) => <code>{m.organization_id}</code>],
              ['Roles', (m) => m.roles?.map((r) => r.slug).join(', ') ?? m.role?.slug],
              ['Status', (m) => <Badge value={m.status} />],
            ]}
          />
          <InlineForm
            label="Add membership"
            name="add membership"
            onSubmit={async (v) => {
              const input = {
                environment: env.id,
                user_id: userId,
                organization_id: v.organization_id ?? '',
                role_slug: v.role_slug || undefined,
              };
              const made = await action.run(() => trpc.admin.memberships.create.mutate(input));
              memberships.reload();
              return made !== undefined;
            }}
          >
            <Field name="organization_id" label="Organization id" required />
            <Field name="role_slug" label="Role slug (default: member)" />
          </InlineForm>
        </section>
      ) : null}
    </>
  );
}

export function InvitationsPage({ env }: { env: Env }) {
  const invitations = useLoad(() => trpc.admin.invitations.list.query({ environment: env.id, limit: 100 }), [env.id]);
  const action = useAction();
  return (
    <section>
      <h2>Invitations</h2>
      <ErrorLine error={invitations.error ?? action.error} />
      <Table
        rows={invitations.data?.data}
        columns={[
          ['E-mail', (i) => i.email],
          ['Organization', (i) => <code>{i.organization_id ?? '—'}</code>],
          ['State', (i) => <Badge value={i.state} />],
          ['Expires', (i) => time(i.expires_at)],
          [
            '',
            (i) =>
              i.state === 'pending' ? (
                <button
                  type="button"
                  className="danger"
                  onClick={async () => {
                    await action.run(() => trpc.admin.invitations.revoke.mutate({ environment: env.id, id: i.id }));
                    invitations.reload();
                  }}
                >
                  Revoke
                </button>
              ) : null,
          ],
        ]}
      />
      <InlineForm
        label="Send invitation"
        name="send invitation"
        onSubmit={async (v) => {
          const input = { environment: env.id, email: v.email ?? '', organization_id: v.organization_id || undefined };
          const made = await action.run(() => trpc.admin.invitations.send.mutate(input));
          invitations.reload();
          return made !== undefined;
        }}
      >
        <Field name="email" label="E-mail" required />
        <Field name="organization_id" label="Organization id" />
      </InlineForm>
    </section>
  );
}

export function ConnectionsPage({ env }: { env: Env }) {
  const connections = useLoad(() => trpc.admin.connections.list.query({ environment: env.id, limit: 100 }), [env.id]);
  const types = useLoad(() => trpc.admin.connections.types.query(), []);
  const action = useAction();
  return (
    <section>
      <h2>Connections</h2>
      <ErrorLine error={connections.error ?? action.error} />
      <Table
        rows={connections.data?.data}
        columns={[
          ['Name', (c) => c.name],
          ['Type', (c) => c.connection_type],
          ['Organization', (c) => <code>{c.organization_id}</code>],
          ['State', (c) => <Badge value={c.state} />],
          [
            '',
            (c) => (
              <button
                type="button"
                className="danger"
                onClick={async () => {
                  await action.run(() => trpc.admin.connections.delete.mutate({ connection_id: c.id }));
                  connections.reload();
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
          const made = await action.run(() => trpc.admin.connections.create.mutate(input));
          connections.reload();
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
  );
}
