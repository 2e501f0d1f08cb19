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

function render(target: HTMLElement, status: Status, done: boolean): void {
  const heading = document.createElement('h2');
  heading.textContent = done ? 'Your domain is verified. Continuing...' : 'DNS records to publish';
  const list = document.createElement('ul');
  list.append(...status.domains.map(row));
  target.replaceChildren(heading, list);
}

export function watchStatus(target: HTMLElement): void {
  const notVerified = new Set<string>();
  const poll = async () => {
    const res = await fetch('/portal/session/status', { credentials: 'same-origin' });
    if (!res.ok) {
      target.textContent = 'Your admin portal session has ended. Open the admin portal again from a new link.';
      return;
    }
    const status = (await res.json()) as Status;
    const done = status.domains.some((d) => d.state === 'verified' && notVerified.has(d.id));
    for (const d of status.domains) if (d.state !== 'verified') notVerified.add(d.id);
    render(target, status, done);
    if (done && status.successUrl) {
      location.assign(status.successUrl);
      return;
    }
    setTimeout(poll, POLL_MS);
  };
  poll().catch(() => setTimeout(poll, POLL_MS));
}
