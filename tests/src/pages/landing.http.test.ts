import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld, HttpClient } from '../helpers/world.ts';

describe('GET /', () => {
  // The shared server starts in a hook, so no test's own timeout pays for it.
  beforeAll(async () => {
    await getWorld();
  });

  it('is a small page that links to the console, the API reference and the health check', async () => {
    const http = new HttpClient((await getWorld()).url);
    const page = await http.get('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    for (const href of ['/console', '/docs', '/healthz']) expect(page.text).toContain(`href="${href}"`);
    expect(page.text).not.toMatch(/<script|style=/);
    // Each link leads somewhere.
    expect((await http.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await http.get('/docs')).status).toBe(200);
    expect((await http.get('/console')).status).not.toBe(404);
  });

  it('is served under the strict page policy: no inline script, no framing', async () => {
    const page = await new HttpClient((await getWorld()).url).get('/');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("script-src-attr 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('leaves other methods and unknown paths to the JSON 404', async () => {
    const http = new HttpClient((await getWorld()).url);
    for (const res of [await http.post('/', {}), await http.get('/nothing-here')]) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'route_not_found' });
    }
  });
});
