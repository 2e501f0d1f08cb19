import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

type Header = [name: string, value: string];

/**
 * The security headers `helmet` sets, computed once at start-up (they do not depend on the
 * request) and applied with a few `setHeader` calls per request, so the hot path does not run
 * the middleware chain. API responses get a `default-src 'none'` policy; other pages no policy,
 * except the API reference page, which sets its own (docs.ts).
 */
export function headersOf(middleware: ReturnType<typeof helmet>): Header[] {
  const headers: Header[] = [];
  const res = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, Array.isArray(value) ? value.join(', ') : String(value)]);
    },
    removeHeader() {},
  };
  middleware({} as IncomingMessage, res as unknown as ServerResponse, () => {});
  return headers;
}

export const API_SECURITY_HEADERS: Header[] = headersOf(
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  }),
);

export const PAGE_SECURITY_HEADERS: Header[] = headersOf(helmet({ contentSecurityPolicy: false }));

export function applyHeaders(res: ServerResponse, headers: Header[]): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}
