import { describe, expect, it } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import type { HttpResponse } from '../helpers/world.ts';
import { newEnvironment } from '../helpers/world.ts';
import { newDirectory } from '../scim/helpers.ts';

/**
 * Every codec writes its answer with its length (exchange.ts `writeAnswer`): a body sent without
 * one goes chunked, which costs the server more writes and every client the chunks to parse. The
 * GraphQL codec sent its answers chunked until it wrote them through `writeAnswer` too.
 */
function expectLength(label: string, res: HttpResponse): void {
  expect(res.headers.get('transfer-encoding'), label).toBeNull();
  expect(res.headers.get('content-length'), label).toBe(String(Buffer.byteLength(res.text)));
  expect(res.text.length, label).toBeGreaterThan(0);
}

describe('answers carry their length, never chunked', () => {
  it('REST, tRPC, GraphQL (data and error), SCIM and the JWKS', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const graphql = (body: string) =>
      a.http.request('POST', '/client/graphql', {
        raw: body,
        headers: { ...WIDGET_HEADERS, Accept: 'application/graphql-response+json, application/json' },
      });
    const directory = await newDirectory({ env, organizationId: a.organizationId });

    const data = await graphql(
      JSON.stringify({
        query: 'query ($id: ID!) { organization(id: $id) { id } }',
        variables: { id: a.organizationId },
      }),
    );
    const answers: [string, HttpResponse, number][] = [
      ['REST list', await env.http.get('/organizations?limit=1'), 200],
      ['REST refusal', await env.http.get('/organizations/org_01ARZ3NDEKTSV4RRFFQ69G5FAV'), 404],
      [
        'tRPC',
        await a.http.get(
          `/trpc/client.organization?input=${encodeURIComponent(JSON.stringify({ id: a.organizationId }))}`,
        ),
        200,
      ],
      [
        'GraphQL data',
        await graphql(
          JSON.stringify({
            query: 'query ($id: ID!) { organization(id: $id) { id } }',
            variables: { id: a.organizationId },
          }),
        ),
        200,
      ],
      ['GraphQL syntax error', await graphql(JSON.stringify({ query: '{ organization(' })), 400],
      ['GraphQL refusal', await env.http.post('/client/graphql', { query: '{ __typename }' }), 403],
      ['SCIM', await directory.scim.get(`${directory.base}/Users`), 200],
      ['SCIM refusal', await directory.scim.get(`${directory.base}/Users/nope`), 404],
      ['JWKS', await env.http.get(`/sso/jwks/${env.clientId}`), 200],
    ];
    for (const [label, res, status] of answers) {
      expect(res.status, `${label}: ${res.text}`).toBe(status);
      expectLength(label, res);
    }
    // The GraphQL answer is the data, whole (its length is not a truncation).
    expect(data.body.data).toEqual({ organization: { id: a.organizationId } });
  });
});
