import { skipToken, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { trpc } from './api.ts';
import type { Env } from './environments.tsx';
import { attempt, Badge, ErrorLine, Field, InlineForm, lastError, Table, time } from './ui.tsx';

export function UsersPage({ env }: { env: Env }) {
  const users = useQuery(trpc.admin.users.list.queryOptions({ environment: env.id, limit: 100 }));
  const [userId, setUserId] = useState<string | undefined>(undefined);
  const memberships = useQuery(
    trpc.admin.memberships.list.queryOptions(userId ? { environment: env.id, user_id: userId, limit: 100 } : skipToken),
  );
  const createUser = useMutation(trpc.admin.users.create.mutationOptions());
  const addMembership = useMutation(trpc.admin.memberships.create.mutationOptions());
  return (
    <>
      <section>
        <h2>Users</h2>
        <ErrorLine error={users.error ?? lastError(createUser, addMembership)} />
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
            const made = await attempt(createUser.mutateAsync({ environment: env.id, email: v.email ?? '' }));
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
            rows={memberships.data?.data}
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
              const made = await attempt(addMembership.mutateAsync(input));
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
  const invitations = useQuery(trpc.admin.invitations.list.queryOptions({ environment: env.id, limit: 100 }));
  const send = useMutation(trpc.admin.invitations.send.mutationOptions());
  const revoke = useMutation(trpc.admin.invitations.revoke.mutationOptions());
  return (
    <section>
      <h2>Invitations</h2>
      <ErrorLine error={invitations.error ?? lastError(send, revoke)} />
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
                  onClick={() => revoke.mutate({ environment: env.id, id: i.id })}
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
          const made = await attempt(send.mutateAsync(input));
          return made !== undefined;
        }}
      >
        <Field name="email" label="E-mail" required />
        <Field name="organization_id" label="Organization id" />
      </InlineForm>
    </section>
  );
}
