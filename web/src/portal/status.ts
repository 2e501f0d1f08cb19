// The live state of the organization's domains under the widget, from the cookie-authenticated
// `GET /portal/session/status`: each domain's TXT record and state. When a domain that was not
// verified becomes verified, the page goes to the link's `success_url` (the only place it sends
// the browser; the server accepted it as an absolute http(s) URL).

interface Status {
  successUrl: string | null;
  domains: { id: string; domain: string; state: string; record: { type: string; name: string; value: string } }[];
}

const POLL_MS = 2_000;

function row(domain: Status['domains'][number]): HTMLElement {
  const item = document.createElement('li');
  item.dataset.domain = domain.domain;
  item.dataset.state = domain.state;
  const name = document.createElement('strong');
  name.textContent = domain.domain;
  const state = document.createElement('span');
  state.className = `portal-state portal-state-${domain.state}`;
  state.textContent = domain.state;
  const record = document.createElement('code');
  record.className = 'portal-record';
  record.dataset.name = domain.record.name;
  record.dataset.value = domain.record.value;
  record.textContent = `${domain.record.type} ${domain.record.name} "${domain.record.value}"`;
  item.append(name, ' ', state, document.createElement('br'), record);
  return item;
}

/** The records still to publish (domains not verified yet), under a heading only when there are some. */
function render(target: HTMLElement, status: Status, done: boolean): void {
  const heading = document.createElement('h2');
  if (done) {
    heading.textContent = 'Your domain is verified. Continuing...';
    target.replaceChildren(heading);
    return;
  }
  const waiting = status.domains.filter((d) => d.state !== 'verified');
  if (waiting.length === 0) {
    target.replaceChildren();
    return;
  }
  heading.textContent = 'DNS records to publish';
  const list = document.createElement('ul');
  list.append(...waiting.map(row));
  target.replaceChildren(heading, list);
}

/** The "Add a domain" form: `POST /portal/session/domains` with the session's CSRF token. */
function addDomainForm(csrf: string, added: () => void): HTMLFormElement {
  const form = document.createElement('form');
  form.className = 'portal-add';
  const input = document.createElement('input');
  input.name = 'domain';
  input.placeholder = 'example.com';
  input.required = true;
  input.setAttribute('aria-label', 'Domain');
  const button = document.createElement('button');
  button.type = 'submit';
  button.textContent = 'Add a domain';
  const message = document.createElement('p');
  message.className = 'portal-add-message';
  form.append(input, button, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const res = await fetch('/portal/session/domains', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      credentials: 'same-origin',
      body: JSON.stringify({ domain: input.value }),
    });
    const body = (await res.json().catch(() => ({}))) as { message?: string };
    message.textContent = res.ok ? '' : (body.message ?? `The domain could not be added (${res.status}).`);
    if (res.ok) {
      input.value = '';
      added();
    }
  });
  return form;
}

/** The status panel; `onAdded` runs after the form adds a domain (the page remounts the widget). */
export function watchStatus(target: HTMLElement, csrf: string, onAdded: () => void = () => {}): void {
  const notVerified = new Set<string>();
  const list = document.createElement('div');
  let timer: ReturnType<typeof setTimeout> | undefined;
  const poll = async () => {
    clearTimeout(timer);
    const res = await fetch('/portal/session/status', { credentials: 'same-origin' });
    if (!res.ok) {
      target.textContent = 'Your admin portal session has ended. Open the admin portal again from a new link.';
      return;
    }
    const status = (await res.json()) as Status;
    const done = status.domains.some((d) => d.state === 'verified' && notVerified.has(d.id));
    for (const d of status.domains) if (d.state !== 'verified') notVerified.add(d.id);
    render(list, status, done);
    if (done && status.successUrl) {
      location.assign(status.successUrl);
      return;
    }
    timer = setTimeout(poll, POLL_MS);
  };
  target.replaceChildren(
    addDomainForm(csrf, () => {
      onAdded();
      void poll();
    }),
    list,
  );
  poll().catch(() => {
    timer = setTimeout(poll, POLL_MS);
  });
}
