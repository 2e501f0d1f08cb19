import { beforeAll, describe, expect, it } from 'vitest';
import { checkUpstreamResponse, takeUpstreamViolations, upstreamOperation } from '../helpers/upstream-contract.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const json = 'application/json; charset=utf-8';

/** The guard that checks every REST response of the suite against upstream's OpenAPI document. */
describe("upstream's OpenAPI document as the suite's response check", () => {
  let env: TestEnvironment;
  // The worker's world and the parsed document, made under the hook timeout.
  beforeAll(async () => {
    env = await newEnvironment();
    upstreamOperation('GET', '/organizations');
  });

  it('matches a request to its upstream operation by method and path template, the most literal first', () => {
    expect(upstreamOperation('GET', '/organizations/org_1')?.template).toBe('/organizations/{id}');
    expect(upstreamOperation('GET', '/organizations/external_id/x')?.template).toBe(
      '/organizations/external_id/{external_id}',
    );
    expect(upstreamOperation('GET', '/user_management/invitations/by_token/tok')?.template).toBe(
      '/user_management/invitations/by_token/{token}',
    );
    expect(upstreamOperation('PATCH', '/organizations/org_1')).toBeUndefined();
    expect(upstreamOperation('GET', '/_widgets/UserManagement/members')).toBeUndefined();
    expect(upstreamOperation('GET', '/organizations/')).toBeUndefined();
  });

  it('refuses null for a field upstream declares optional, naming operation, status, place and expectation', async () => {
    const created = await env.http.post('/organizations', { name: 'Acme' });
    const read = await env.http.get(`/organizations/${created.body.id}`);
    const response = { method: 'GET', pathname: `/organizations/${created.body.id}`, status: 200, contentType: json };
    // What the server answers conforms: stripe_customer_id is absent while unset.
    expect(checkUpstreamResponse({ ...response, text: read.text })).toEqual([]);
    // The answer as it was before #34 item 10 is caught.
    const withNull = JSON.stringify({ ...read.body, stripe_customer_id: null });
    const [problem, ...more] = checkUpstreamResponse({ ...response, text: withNull });
    expect(more).toEqual([]);
    expect(problem).toContain(`GET /organizations/${created.body.id} answered 200`);
    expect(problem).toContain('GET /organizations/{id} (OrganizationsController_find)');
    expect(problem).toContain('/stripe_customer_id must be string (got null)');
    // Nothing was left for the test's own check: its real responses conformed.
    expect(await takeUpstreamViolations()).toEqual([]);
  });

  it('flags a missing required field, a wrong type inside a list, and an undeclared success status', () => {
    const list = {
      object: 'list',
      data: [{ object: 'organization', id: 'org_1', name: 7, domains: [], metadata: {}, created_at: 'x' }],
      list_metadata: { before: null, after: null },
    };
    const problems = checkUpstreamResponse({
      method: 'GET',
      pathname: '/organizations',
      status: 200,
      contentType: json,
      text: JSON.stringify(list),
    });
    expect(problems.join('\n')).toContain('/data/0/name must be string (got 7)');
    expect(problems.join('\n')).toContain("/data/0/external_id must have required property 'external_id'");
    expect(problems.join('\n')).toContain('/data/0/created_at must match format "date-time"');
    const created = checkUpstreamResponse({
      method: 'POST',
      pathname: '/organizations',
      status: 200,
      contentType: json,
      text: '{}',
    });
    expect(created.join('\n')).toContain('upstream declares no 200 (it declares 201, 400, 409, 422)');
  });

  it("checks error bodies against CONTRACT.md's shape and upstream's declared error schema", () => {
    const error = (status: number, body: unknown, pathname = '/organizations/org_1', method = 'GET') =>
      checkUpstreamResponse({ method, pathname, status, contentType: json, text: JSON.stringify(body) });
    expect(error(404, { code: 'entity_not_found', message: 'Organization not found.' })).toEqual([]);
    expect(error(404, { message: 'Organization not found.' }).join('\n')).toContain(
      "CONTRACT.md's error shape: /code must have required property 'code'",
    );
    expect(error(409, { code: 'conflict', message: 'x' }, '/organization_domains', 'POST').join('\n')).toContain(
      '/code must be equal to constant "domain_already_exists"',
    );
    // A deviation listed on purpose (upstream-deviations.ts) is allowed.
    expect(error(400, { code: 'invalid_json', message: 'x' }, '/organizations', 'POST')).toEqual([]);
  });
});
