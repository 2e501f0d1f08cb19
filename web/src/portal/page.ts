// What every setup page of the admin portal shares (the sso, dsync and log_streams pages; the
// domain page predates it): building elements, a value with a copy button, the cookie-authenticated
// write with the session's CSRF token, and the poll of `GET /portal/session/status` that redraws
// the page and says so when the session has ended. A page is a function of the status it draws.

/** Polls this often while the page is open. */
export const POLL_MS = 3_000;

const ENDED = 'Your admin portal session has ended. Open the admin portal again from a new link.';

/** A new element with its text and class. */
export function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string) {
  const el = document.createElement(tag);
  if (text !== undefined) el.textContent = text;
  if (className) el.className = className;
  return el;
}

/** A value with a copy button (the Clipboard API; a refusal leaves the value selectable). */
export function copyable(value: string, name: string, label: string): HTMLElement {
  const box = element('div', undefined, 'portal-copy');
  const code = element('code', value);
  code.dataset.copy = name;
  const button = element('button', `Copy ${label}`);
  button.type = 'button';
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      button.textContent = 'Copied';
    } catch {
      getSelection()?.selectAllChildren(code);
    }
  });
  box.append(code, button);
  return box;
}

/** A write's answer: the JSON body, or the refusal's words (each field's message, else the message). */
export type Sent = { ok: true; body: any } | { ok: false; body: string };

/**
 * A cookie-authenticated write (POST unless told) with the session's CSRF token and, when given,
 * a JSON body.
 */
export async function send(csrf: string, path: string, body?: unknown, method = 'POST'): Promise<Sent> {
  const res = await fetch(path, {
    method,
    headers: { 'X-CSRF-Token': csrf, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = await res.json().catch(() => ({}));
  if (res.ok) return { ok: true, body: parsed };
  const fields = (parsed.errors ?? []).map((e: { message: string }) => e.message).join(' ');
  return { ok: false, body: fields || parsed.message || `Refused (${res.status}).` };
}

/**
 * Polls the session's status every POLL_MS and hands it to `draw`; when the session has ended, the
 * target says so and polling stops. The returned function polls at once (after a write).
 */
export function watchPortalStatus<S>(target: HTMLElement, draw: (status: S) => void): () => Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const poll = async () => {
    clearTimeout(timer);
    const res = await fetch('/portal/session/status', { credentials: 'same-origin' });
    if (!res.ok) {
      target.textContent = ENDED;
      return;
    }
    draw((await res.json()) as S);
    timer = setTimeout(poll, POLL_MS);
  };
  poll().catch(() => {
    timer = setTimeout(poll, POLL_MS);
  });
  return poll;
}
