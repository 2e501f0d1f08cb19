// The audit_logs page: the organization's audit log events in a table (time, action, actor, targets,
// location), newest first, with filters (action, actor id, actor name, a date range), Next/Previous
// by cursor, and "Export CSV": an export of the current filters (routers/src/audit-logs/service.ts),
// shown pending, polled until ready, then its signed download link. There is no widget: every call
// is cookie-authenticated with the session's CSRF token (rest-facade/src/portal.ts).

import { element, POLL_MS, send } from './page.ts';

interface AuditLogEntity {
  id: string;
  type: string;
  name?: string;
}

interface AuditLogEvent {
  id: string;
  action: string;
  occurred_at: string;
  actor: AuditLogEntity;
  targets: AuditLogEntity[];
  context: { location: string; user_agent?: string };
}

interface EventList {
  data: AuditLogEvent[];
  list_metadata: { before: string | null; after: string | null };
}

interface AuditLogExport {
  id: string;
  state: 'pending' | 'ready' | 'error';
  url?: string;
}

const ENDED = 'Your admin portal session has ended. Open the admin portal again from a new link.';
const PAGE_SIZE = 20;

/** The filter form's fields: the query key, its label and its input type. */
const FILTERS = [
  { key: 'action', label: 'Action', type: 'text', placeholder: 'user.signed_in' },
  { key: 'actor_id', label: 'Actor ID', type: 'text', placeholder: 'user_01...' },
  { key: 'actor_name', label: 'Actor name', type: 'text', placeholder: 'Jon Smith' },
  { key: 'range_start', label: 'From', type: 'datetime-local' },
  { key: 'range_end', label: 'To', type: 'datetime-local' },
] as const;

/** The form's filters as the API takes them: empty fields left out, local times as ISO 8601 UTC. */
function filtersOf(form: HTMLFormElement): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const { key, type } of FILTERS) {
    const value = (form.elements.namedItem(key) as HTMLInputElement | null)?.value.trim() ?? '';
    if (value === '') continue;
    const date = type === 'datetime-local' ? new Date(value) : undefined;
    filters[key] = date && !Number.isNaN(date.getTime()) ? date.toISOString() : value;
  }
  return filters;
}

const entityText = (e: AuditLogEntity) => (e.name ? `${e.name} (${e.id})` : e.id);

/** One event as a table row. */
function eventRow(event: AuditLogEvent): HTMLTableRowElement {
  const row = element('tr');
  row.dataset.event = event.id;
  const time = element('time', new Date(event.occurred_at).toLocaleString());
  time.dateTime = event.occurred_at;
  const cells: (string | HTMLElement)[] = [
    time,
    element('code', event.action),
    entityText(event.actor),
    event.targets.map((t) => `${t.type}: ${entityText(t)}`).join(', '),
    event.context.location,
  ];
  for (const cell of cells) {
    const td = element('td');
    td.append(cell);
    row.append(td);
  }
  return row;
}

/** The table of a page of events (or a line saying there are none). */
function eventTable(list: EventList): HTMLElement {
  if (list.data.length === 0) return element('p', 'No audit log events match these filters.', 'portal-message');
  const table = element('table', undefined, 'portal-events');
  table.dataset.testid = 'portal-audit-log-events';
  const head = element('tr');
  for (const title of ['Time', 'Action', 'Actor', 'Targets', 'Location']) head.append(element('th', title));
  const body = element('tbody');
  body.append(...list.data.map(eventRow));
  table.append(element('thead'), body);
  table.tHead?.append(head);
  return table;
}

/** The audit_logs page: filters, the table, paging and the export. */
export function watchAuditLogs(target: HTMLElement, csrf: string): void {
  const form = element('form', undefined, 'portal-add portal-filters');
  form.dataset.testid = 'portal-audit-log-filters';
  for (const { key, label, type, ...rest } of FILTERS) {
    const field = element('label', undefined, 'portal-field');
    const input = element('input');
    input.name = key;
    input.type = type;
    input.setAttribute('aria-label', label);
    if ('placeholder' in rest) input.placeholder = rest.placeholder;
    field.append(element('span', label), input);
    form.append(field);
  }
  const apply = element('button', 'Apply filters');
  apply.type = 'submit';
  const exportButton = element('button', 'Export CSV');
  exportButton.type = 'button';
  form.append(apply, ' ', exportButton);
  const message = element('p', '', 'portal-add-message');
  const exported = element('p', '', 'portal-export');
  exported.dataset.testid = 'portal-audit-log-export';
  const table = element('div');
  const previous = element('button', 'Previous');
  const next = element('button', 'Next');
  previous.type = 'button';
  next.type = 'button';
  const pager = element('div', undefined, 'portal-actions');
  pager.append(previous, ' ', next);
  target.replaceChildren(element('h2', 'Audit log events'), form, message, exported, table, pager);

  /** The filters the table shows (applied), and the cursors of the page around it. */
  let applied: Record<string, string> = {};
  let cursors: EventList['list_metadata'] = { before: null, after: null };

  const load = async (cursor: { after?: string; before?: string } = {}) => {
    const query = new URLSearchParams({ ...applied, ...cursor, limit: String(PAGE_SIZE) });
    const res = await send(csrf, `/portal/session/audit_logs?${query}`, undefined, 'GET');
    if (!res.ok) {
      message.textContent = /session/i.test(res.body) ? ENDED : res.body;
      return;
    }
    message.textContent = '';
    const list = res.body as EventList;
    cursors = list.list_metadata;
    table.replaceChildren(eventTable(list));
    previous.disabled = cursors.before === null;
    next.disabled = cursors.after === null;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    applied = filtersOf(form);
    void load();
  });
  next.addEventListener('click', () => cursors.after && void load({ after: cursors.after }));
  previous.addEventListener('click', () => cursors.before && void load({ before: cursors.before }));

  /** Polls an export until it leaves `pending`, then shows its link (or why not). */
  const watchExport = async (id: string) => {
    const res = await send(csrf, `/portal/session/audit_logs/exports/${encodeURIComponent(id)}`, undefined, 'GET');
    if (!res.ok) {
      exported.textContent = res.body;
      exportButton.disabled = false;
      return;
    }
    const state = (res.body as AuditLogExport).state;
    exported.dataset.state = state;
    if (state === 'pending') {
      setTimeout(() => void watchExport(id), POLL_MS);
      return;
    }
    exportButton.disabled = false;
    if (state === 'error') {
      exported.textContent = 'The export could not be built. Try again.';
      return;
    }
    const link = element('a', 'Download CSV');
    link.href = (res.body as AuditLogExport).url ?? '';
    link.rel = 'noopener';
    link.dataset.testid = 'portal-audit-log-download';
    exported.replaceChildren('Your export is ready: ', link, ' (the link works for 10 minutes).');
  };

  exportButton.addEventListener('click', async () => {
    exportButton.disabled = true;
    // The export covers the filters in the form (applied too, so the table shows what is exported).
    applied = filtersOf(form);
    void load();
    const res = await send(csrf, '/portal/session/audit_logs/exports', applied);
    if (!res.ok) {
      exported.textContent = res.body;
      exportButton.disabled = false;
      return;
    }
    exported.dataset.state = 'pending';
    exported.textContent = 'Preparing your export...';
    await watchExport((res.body as AuditLogExport).id);
  });

  void load();
}
