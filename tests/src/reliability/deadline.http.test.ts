import type { Deps, Mailer } from '@atrium/routers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { HttpClient, newEnvironment } from '../helpers/world.ts';
import { startOwnApp } from './own-app.ts';

const INVITE = `mutation ($email: String!) { inviteUser(input: { email: $email }) {
  __typename ... on UserInvited { invitation { id } } } }`;

const UNAVAILABLE = {
  code: 'service_unavailable',
  message: 'The service is temporarily unavailable. Try again shortly.',
};

/**
 * A mailer that holds every send until the test opens it: a call that mails (an invitation)
 * runs until then, however long, without a sleep, on PGlite and PostgreSQL alike.
 */
function heldMailer() {
  const sent: string[] = [];
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const mailer: Mailer = {
    async send(message) {
      sent.push(message.to);
      await opened;
    },
  };
  return { mailer, sent, open };
}

/**
 * The request deadline (`config.requestTimeoutMs`) is a step of the one pipeline: a call still
 * running past it is answered 503 `service_unavailable` in its codec's shape, on REST, `/trpc`
 * and GraphQL alike, while the call itself is still held (the answer cannot have waited for it).
 */
describe('the request deadline', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>> | undefined;
  let release: (() => void) | undefined;
  afterEach(async () => {
    release?.();
    await own?.close();
    own = undefined;
  });

  it('cuts a GraphQL call that runs past it as it cuts a REST one (and a /trpc one): 503, in each shape', async () => {
    const env = await newEnvironment();
    const member = await clientSetup(env);
    const held = heldMailer();
    release = held.open;
    const deps: Deps = { ...env.deps, mailer: held.mailer, config: { ...env.deps.config, requestTimeoutMs: 1_000 } };
    own = await startOwnApp(deps);
    const api = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    const widgets = new HttpClient(own.url, { Authorization: `Bearer ${member.token}`, ...WIDGET_HEADERS });
    const [viaRest, viaTrpc, viaGraphql] = [uniqueEmail('rest'), uniqueEmail('trpc'), uniqueEmail('graphql')];

    const rest = await api.post('/user_management/invitations', {
      email: viaRest,
      organization_id: member.organizationId,
    });
    expect(rest.status, rest.text).toBe(503);
    expect(rest.body).toEqual(UNAVAILABLE);

    const trpc = await api.post('/trpc/invitations.send', { email: viaTrpc, organization_id: member.organizationId });
    expect(trpc.status, trpc.text).toBe(503);
    expect(trpc.body.error.data).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      httpStatus: 503,
      path: 'invitations.send',
      contract: { status: 503, body: UNAVAILABLE },
    });

    const graphql = await widgets.post('/client/graphql', { query: INVITE, variables: { email: viaGraphql } });
    expect(graphql.status, graphql.text).toBe(503);
    expect(graphql.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(graphql.body).toEqual({
      errors: [{ message: UNAVAILABLE.message, extensions: { code: 'SERVICE_UNAVAILABLE', status: 503 } }],
    });

    // All three were answered while their mail was still held: cut by the deadline, not finished.
    await vi.waitFor(() => expect([...held.sent].sort()).toEqual([viaRest, viaTrpc, viaGraphql].sort()));
    held.open();
    // A call within the deadline is answered as ever.
    const status = await widgets.post('/client/graphql', { query: '{ clientApiStatus }' });
    expect(status.status).toBe(200);
    expect(status.body).toEqual({ data: { clientApiStatus: 'ok' } });
    // The turns of the calls cut off were given back at their deadline.
    await vi.waitFor(() => expect(own?.app.inFlight?.load).toEqual({ running: 0, waiting: 0 }));
  });
});
