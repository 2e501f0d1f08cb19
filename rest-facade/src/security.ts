import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

type Header = [name: string, value: string];

/**
 * The security headers `helmet` sets, computed once at start-up (they do not depend on the
 * request), so the hot path does not run the middleware chain: the pipeline's answers send them
 * as a flat list in one `writeHead` (exchange.ts), the Express pages with `setHeader`. API
 * responses get a `default-src 'none'` policy; other pages no policy, except the API reference
 * page, which sets its own (docs.ts).
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

/** The same, as the flat `[name, value, ...]` lists the pipeline's answers carry (exchange.ts `writeHead`). */
export const API_SECURITY_LIST: readonly string[] = API_SECURITY_HEADERS.flat();
export const PAGE_SECURITY_LIST: readonly string[] = PAGE_SECURITY_HEADERS.flat();

export function applyHeaders(res: ServerResponse, headers: Header[]): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}

/** What a page served by Atrium may load beyond its own origin's scripts, styles, images and calls. */
export interface PageAllowances {
  /** Inline `style` attributes (React/Radix and Vue set them); never inline script. */
  inlineStyles?: boolean;
  /** Fonts (from this origin and `data:`). */
  fonts?: boolean;
  /** `blob:` images and workers (the API reference's client). */
  blobs?: boolean;
  /** Origins the page may call besides its own. */
  connect?: string[];
  /** `<base>` may name this origin (else none). */
  baseSelf?: boolean;
}

/**
 * The one strict policy of Atrium's pages (portal, console, API reference): everything from this
 * origin, no inline script, no plugins, forms to this origin, no framing; `allow` loosens only
 * what a page needs, and `options` adds other helmet settings.
 */
export function strictPageHeaders(
  allow: PageAllowances = {},
  options: Pick<HelmetOptions, 'referrerPolicy' | 'crossOriginResourcePolicy'> = {},
) {
  const directives: Record<string, string[]> = {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    scriptSrcAttr: ["'none'"],
    styleSrc: allow.inlineStyles ? ["'self'", "'unsafe-inline'"] : ["'self'"],
    imgSrc: allow.blobs ? ["'self'", 'data:', 'blob:'] : ["'self'", 'data:'],
    connectSrc: ["'self'", ...(allow.connect ?? [])],
    objectSrc: ["'none'"],
    baseUri: allow.baseSelf ? ["'self'"] : ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  };
  if (allow.fonts) directives.fontSrc = ["'self'", 'data:'];
  if (allow.blobs) directives.workerSrc = ["'self'", 'blob:'];
  return headersOf(helmet(Object.assign({ contentSecurityPolicy: { useDefaults: false, directives } }, options)));
}
