import { join } from 'node:path';
import {
  ApiError,
  addPortalDirectory,
  addPortalDomain,
  configurePortalSso,
  createPortalAuditLogExport,
  type Deps,
  deletePortalLogStream,
  issuePortalToken,
  type LivePortalSession,
  openPortalLink,
  PORTAL_SESSION_TTL_MS,
  pausePortalLogStream,
  portalAuditLogEvents,
  portalAuditLogExport,
  portalCsrfMatches,
  portalCsrfToken,
  portalLogStream,
  portalSessionOfCookie,
  portalSsoStatus,
  portalStatus,
  rotatePortalDirectoryToken,
  savePortalLogStream,
  startPortalSso,
} from '@atrium/routers';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { cookieValue, csrfToken, sessionCookie } from './pipeline/cookies.ts';
import { escapeHtml, type Page, refusalPage, sendPage } from './pipeline/pages.ts';
import { writeError } from './pipeline/render.ts';
import { applyHeaders, strictPageHeaders } from './security.ts';

/**
 * The self-serve admin portal (issue #23, docs/portal.md): a link from `POST /portal/generate_link`
 * opens here (GET, or the form POST the official widgets send), becomes a portal session cookie
 * (`Path=/portal`, HttpOnly, SameSite=Lax), and the intent's page runs the official widget with a
 * portal token from `POST /portal/session/token` (cookie and CSRF token). Pages run no inline script.
 */
export const PORTAL_COOKIE = 'atrium_portal';
const INTENTS = ['domain_verification', 'sso', 'dsync', 'log_streams', 'audit_logs'] as const;
const TITLES: Record<(typeof INTENTS)[number], string> = {
  domain_verification: 'Domain verification',
  sso: 'Single sign-on',
  dsync: 'Directory sync',
  log_streams: 'Log streams',
  audit_logs: 'Audit logs',
};

// React and Radix set style attributes; no script may be inline.
const PAGE_HEADERS = strictPageHeaders(
  { inlineStyles: true, fonts: true },
  { referrerPolicy: { policy: 'no-referrer' } },
);

function noStore(res: Response): void {
  applyHeaders(res, PAGE_HEADERS);
  res.setHeader('Cache-Control', 'no-store');
}

const STYLESHEETS = ['/portal/assets/portal.css'];

/** A readable page for a link or session that cannot be used (the admin asks for a new link). */
function refusal(res: Response, status: number, heading: string, text: string): void {
  noStore(res);
  sendPage(res, status, refusalPage(heading, text, STYLESHEETS));
}

const REFUSALS = {
  used: [410, 'This link has already been used', 'Admin portal links work once. Ask for a new link.'],
  expired: [410, 'This link has expired', 'Admin portal links are valid for 5 minutes. Ask for a new link.'],
  unknown: [404, 'This link is not valid', 'Check that you copied the whole link, or ask for a new one.'],
  ended: [401, 'Your admin portal session has ended', 'Open the admin portal again from a new link.'],
} as const;

function refuse(res: Response, why: keyof typeof REFUSALS): void {
  const [status, heading, text] = REFUSALS[why];
  refusal(res, status, heading, text);
}

async function launch(deps: Deps, secure: boolean, secret: unknown, res: Response): Promise<void> {
  const opened = await openPortalLink(deps, typeof secret === 'string' ? secret : '');
  if (opened.kind !== 'opened') return refuse(res, opened.kind);
  noStore(res);
  const maxAgeSeconds = PORTAL_SESSION_TTL_MS / 1000;
  res.setHeader(
    'Set-Cookie',
    sessionCookie(PORTAL_COOKIE, opened.cookie, { path: '/portal', sameSite: 'lax', maxAgeSeconds, secure }),
  );
  res.redirect(303, `/portal/${opened.intent}`);
}

function page(deps: Deps, live: LivePortalSession): Page {
  const { session, organizationName } = live;
  const title = `${organizationName} · ${TITLES[session.intent]}`;
  const back = session.returnUrl ? `<a class="portal-back" href="${escapeHtml(session.returnUrl)}">Back</a>` : '';
  return {
    title,
    lang: 'en',
    stylesheets: STYLESHEETS,
    meta: [
      ['atrium-portal-csrf', portalCsrfToken(deps, session.id)],
      ['atrium-portal-intent', session.intent],
    ],
    scripts: [{ src: '/portal/assets/portal.js', defer: true }],
    body: `    <header class="portal-header">${back}<h1>${escapeHtml(title)}</h1></header>
    <main><div id="portal-root"></div><section id="portal-status" data-testid="portal-status"></section></main>`,
  };
}

/** The live session of the request's cookie, or undefined. */
const sessionOf = (deps: Deps, req: Request) => portalSessionOfCookie(deps, cookieValue(req.headers, PORTAL_COOKIE));

/** A cookie-authenticated call refused: 403 `forbidden` in the contract's JSON (render.ts `writeError`). */
function refusedJson(res: Response, message: string): void {
  noStore(res);
  writeError({ res }, new ApiError(403, 'forbidden', message));
}

/**
 * The live session of a cookie-authenticated write that also carries the session's CSRF token;
 * otherwise undefined, with the 403 already sent.
 */
async function writerOf(deps: Deps, req: Request, res: Response): Promise<LivePortalSession | undefined> {
  const live = await sessionOf(deps, req);
  if (!live) return void refusedJson(res, 'No live admin portal session.');
  if (!portalCsrfMatches(deps, live.session.id, csrfToken(req.headers))) {
    return void refusedJson(res, 'The CSRF token is missing or wrong.');
  }
  return live;
}

/** The portal's routes, for the Express shell (pages.ts); `assetsDir` holds the built page bundle. */
export function portalRoutes(deps: Deps, assetsDir: string | undefined): Router {
  const app = express.Router();
  const secure = deps.tokens.issuer.startsWith('https:');
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 4 });
  app.get('/portal/launch', (req, res) => launch(deps, secure, req.query.apiToken, res));
  app.post('/portal/launch', form, (req, res) => launch(deps, secure, req.body?.apiToken, res));
  for (const intent of INTENTS) {
    app.get(`/portal/${intent}`, async (req, res) => {
      const live = await sessionOf(deps, req);
      if (!live || live.session.intent !== intent) return refuse(res, 'ended');
      noStore(res);
      sendPage(res, 200, page(deps, live));
    });
    // A widget inside the page opens the link it was given (the page itself) by a form POST in a
    // new tab: that tab shows the same session's page (ownPortalPage in routers/src/portal).
    app.post(`/portal/${intent}`, form, (_req, res) => {
      noStore(res);
      res.redirect(303, `/portal/${intent}`);
    });
  }
  // The page's bearer token for the widgets: cookie-authenticated, so the CSRF token is required.
  app.post('/portal/session/token', async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    noStore(res);
    res.json(await issuePortalToken(deps, live));
  });
  // "Add a domain" on the domain_verification page: a cookie-authenticated write, CSRF-checked too.
  app.post('/portal/session/domains', express.json({ limit: '4kb' }), async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const added = await addPortalDomain(deps, live, req.body?.domain);
    noStore(res);
    res.status(201).json({ id: added.id, domain: added.domain, state: added.state });
  });
  // The dsync page's "Create directory" and "Rotate token": cookie-authenticated writes, CSRF-checked,
  // whose answer is the one place the SCIM token is shown (never cached).
  app.post('/portal/session/directories', express.json({ limit: '4kb' }), async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const created = await addPortalDirectory(deps, live, req.body);
    noStore(res);
    res.status(201).json(created);
  });
  app.post('/portal/session/directories/:id/token', async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const rotated = await rotatePortalDirectoryToken(deps, live, req.params.id);
    noStore(res);
    res.json(rotated);
  });
  // The sso page's setup flow: "Start" makes an inactive connection of the chosen provider; "Save"
  // configures it from the IdP metadata (pasted XML up to the SAML module's 1 MB, or a URL).
  app.post('/portal/session/sso', express.json({ limit: '4kb' }), async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const started = await startPortalSso(deps, live, req.body);
    noStore(res);
    res.status(201).json(started);
  });
  app.post('/portal/session/sso/:id', express.json({ limit: '1100kb' }), async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const configured = await configurePortalSso(deps, live, req.params.id, req.body);
    noStore(res);
    res.json(configured);
  });
  // The log_streams page: save (create or replace), pause, resume and remove the organization's
  // stream; cookie-authenticated writes, CSRF-checked. No answer carries a secret.
  app.post('/portal/session/log_stream', express.json({ limit: '16kb' }), async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const saved = await savePortalLogStream(deps, live, req.body);
    noStore(res);
    res.json(saved);
  });
  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    app.post(`/portal/session/log_stream/${action}`, async (req, res) => {
      const live = await writerOf(deps, req, res);
      if (!live) return;
      const changed = await pausePortalLogStream(deps, live, paused);
      noStore(res);
      res.json(changed);
    });
  }
  app.delete('/portal/session/log_stream', async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    await deletePortalLogStream(deps, live);
    noStore(res);
    res.status(204).end();
  });
  // The audit_logs page: the organization's events (filtered, paged), an export of the filters and
  // its state (the signed download link once ready). The event list is the organization's record:
  // the reads carry the CSRF token too, like the writes.
  app.get('/portal/session/audit_logs', async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const events = await portalAuditLogEvents(deps, live, req.query);
    noStore(res);
    res.json(events);
  });
  app.post('/portal/session/audit_logs/exports', express.json({ limit: '4kb' }), async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const created = await createPortalAuditLogExport(deps, live, req.body);
    noStore(res);
    res.status(201).json(created);
  });
  app.get('/portal/session/audit_logs/exports/:id', async (req, res) => {
    const live = await writerOf(deps, req, res);
    if (!live) return;
    const found = await portalAuditLogExport(deps, live, req.params.id);
    noStore(res);
    res.json(found);
  });
  app.get('/portal/session/status', async (req, res) => {
    const live = await sessionOf(deps, req);
    if (!live) return refusedJson(res, 'No live admin portal session.');
    const status = await portalStatus(deps, live);
    // The sso page's setup flow: the organization's connections, with what to paste and the test link.
    if (live.session.intent === 'sso') Object.assign(status, { connections: await portalSsoStatus(deps, live) });
    // The log_streams page: the organization's stream (null when none), without its secrets.
    if (live.session.intent === 'log_streams') Object.assign(status, { log_stream: await portalLogStream(deps, live) });
    noStore(res);
    res.json(status);
  });
  for (const file of ['portal.js', 'portal.css']) {
    app.get(`/portal/assets/${file}`, (_req, res, next) => {
      if (!assetsDir) return next();
      res.setHeader('Cache-Control', 'no-cache');
      res.sendFile(join(assetsDir, file), (err) => {
        if (err && !res.headersSent) next();
      });
    });
  }
  // A body the parsers refuse (malformed JSON, too large) is the contract's 400 or 413, not a 500.
  app.use((error: { status?: number; type?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (typeof error?.type !== 'string' || !error.status || error.status >= 500) return next(error);
    const refused =
      error.status === 413
        ? new ApiError(413, 'payload_too_large', 'The request body is too large.')
        : new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
    writeError({ res }, refused);
  });
  return app;
}
