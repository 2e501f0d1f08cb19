// The log_streams page's own part, under the official AdminPortalAuditLogStreaming widget: the IT
// admin chooses where the organization's audit log events go (one of six destinations), fills its
// fields with that destination's help at hand, and saves; the page then shows the stream's state,
// its last error and the last event delivered, with Pause/Resume, Remove and a form to change the
// destination. Secrets are write-only: the page shows which are set, never their values (a change
// of the same type may leave them empty to keep them). Writes are cookie-authenticated with the
// session's CSRF token (routers/src/audit-logs/streams/service.ts); the status is polled.

import { element, send, watchPortalStatus } from './page.ts';

interface LogStream {
  id: string;
  type: string;
  state: 'active' | 'inactive' | 'error' | 'invalid';
  config: Record<string, unknown>;
  credentials_set: string[];
  last_error: string | null;
  last_delivered_event_id: string | null;
  last_attempt_at: string | null;
}

interface Field {
  /** `config.<name>` or `credentials.<name>` (`credentials.authorization` is the GenericHttps header). */
  key: string;
  label: string;
  required?: boolean;
  placeholder?: string;
  options?: readonly string[];
}

const DATADOG_SITES = [
  'datadoghq.com',
  'us3.datadoghq.com',
  'us5.datadoghq.com',
  'datadoghq.eu',
  'ap1.datadoghq.com',
  'ddog-gov.com',
];

/** The destinations: upstream's type, a label, where to find what is asked, and the fields. */
const DESTINATIONS: { type: string; label: string; help: string[]; fields: Field[] }[] = [
  {
    type: 'Datadog',
    label: 'Datadog',
    help: [
      'In Datadog, open Organization Settings > API Keys, then create a key (New Key) or copy an existing one.',
      'Your site is the address you sign in at: app.datadoghq.com is datadoghq.com, app.datadoghq.eu is datadoghq.eu, us3.datadoghq.com is us3.datadoghq.com.',
    ],
    fields: [
      { key: 'config.site', label: 'Datadog site', required: true, options: DATADOG_SITES },
      { key: 'credentials.api_key', label: 'API key', required: true },
    ],
  },
  {
    type: 'Splunk',
    label: 'Splunk (HTTP Event Collector)',
    help: [
      'In Splunk, open Settings > Data inputs > HTTP Event Collector; under Global Settings enable tokens, then choose New Token and copy its token value.',
      'The URL is your HEC address with its port, e.g. https://splunk.example.com:8088 (Splunk Cloud: https://http-inputs-<stack>.splunkcloud.com).',
    ],
    fields: [
      { key: 'config.url', label: 'HEC URL', required: true, placeholder: 'https://splunk.example.com:8088' },
      { key: 'config.index', label: 'Index (optional)', placeholder: 'main' },
      { key: 'credentials.token', label: 'HEC token', required: true },
    ],
  },
  {
    type: 'S3',
    label: 'Amazon S3 (or S3-compatible)',
    help: [
      'Create an IAM user allowed s3:PutObject on the bucket; in IAM > Users > the user > Security credentials, create an access key and copy its access key ID and secret access key.',
      'For S3-compatible storage (MinIO, Ceph, R2...), give its endpoint URL too.',
    ],
    fields: [
      { key: 'config.bucket', label: 'Bucket', required: true, placeholder: 'acme-audit-logs' },
      { key: 'config.region', label: 'Region', required: true, placeholder: 'us-east-1' },
      { key: 'config.prefix', label: 'Key prefix (optional)', placeholder: 'atrium/' },
      { key: 'config.endpoint', label: 'Endpoint (optional)', placeholder: 'https://s3.example.com' },
      { key: 'credentials.access_key_id', label: 'Access key ID', required: true },
      { key: 'credentials.secret_access_key', label: 'Secret access key', required: true },
    ],
  },
  {
    type: 'GoogleCloudStorage',
    label: 'Google Cloud Storage',
    help: [
      'In the Google Cloud console, open Cloud Storage > Settings > Interoperability and create an HMAC key for a service account that may create objects in the bucket (Storage Object Creator).',
      'Copy its access key and secret.',
    ],
    fields: [
      { key: 'config.bucket', label: 'Bucket', required: true, placeholder: 'acme-audit-logs' },
      { key: 'config.prefix', label: 'Object prefix (optional)', placeholder: 'atrium/' },
      { key: 'credentials.access_key_id', label: 'HMAC access key', required: true },
      { key: 'credentials.secret_access_key', label: 'HMAC secret', required: true },
    ],
  },
  {
    type: 'AzureSentinel',
    label: 'Microsoft Sentinel (Azure Monitor)',
    help: [
      'In the Azure portal, open the Log Analytics workspace behind Microsoft Sentinel, then Settings > Agents > Log Analytics agent instructions: copy the Workspace ID and the Primary key.',
      'Events arrive in the custom log table <log type>_CL.',
    ],
    fields: [
      { key: 'config.workspace_id', label: 'Workspace ID', required: true },
      { key: 'config.log_type', label: 'Log type (optional)', placeholder: 'AtriumAuditLogs' },
      { key: 'credentials.shared_key', label: 'Primary key', required: true },
    ],
  },
  {
    type: 'GenericHttps',
    label: 'HTTPS endpoint',
    help: [
      'Atrium POSTs each batch of events as a JSON array to this URL.',
      'If it needs an Authorization header (a bearer token, say), give the whole value.',
    ],
    fields: [
      { key: 'config.url', label: 'Endpoint URL', required: true, placeholder: 'https://siem.example.com/ingest' },
      { key: 'credentials.authorization', label: 'Authorization header (optional)', placeholder: 'Bearer ...' },
    ],
  },
];

const labelOf = (type: string) => DESTINATIONS.find((d) => d.type === type)?.label ?? type;

const STATE_TEXT: Record<LogStream['state'], string> = {
  active: 'Active',
  inactive: 'Paused',
  error: 'Error: delivery failed',
  invalid: 'Invalid: the destination refused the credentials',
};

/** The secret field a form key names (`authorization` is stored as the `headers` secret). */
const secretName = (key: string) => (key === 'credentials.authorization' ? 'headers' : key.split('.')[1]);

/** The request body of the form's fields: `{ type, config, credentials? }` (no credentials: keep them). */
function bodyOf(type: string, form: HTMLFormElement): object {
  const config: Record<string, string> = {};
  const credentials: Record<string, unknown> = {};
  for (const field of DESTINATIONS.find((d) => d.type === type)?.fields ?? []) {
    const input = form.elements.namedItem(`${type}:${field.key}`) as HTMLInputElement | HTMLSelectElement | null;
    const value = input?.value.trim() ?? '';
    if (value === '') continue;
    const [part, name] = field.key.split('.') as [string, string];
    if (part === 'config') config[name] = value;
    else if (name === 'authorization') credentials.headers = { Authorization: value };
    else credentials[name] = value;
  }
  return Object.keys(credentials).length === 0 ? { type, config } : { type, config, credentials };
}

/** One destination's fields and help; shown when its type is chosen. */
function destinationFields(d: (typeof DESTINATIONS)[number], current: LogStream | null): HTMLElement {
  const box = element('div', undefined, 'portal-destination');
  box.dataset.type = d.type;
  const help = element('ol', undefined, 'portal-steps');
  for (const line of d.help) help.append(element('li', line));
  box.append(help);
  const same = current?.type === d.type;
  for (const field of d.fields) {
    const label = element('label', undefined, 'portal-field');
    const name = `${d.type}:${field.key}`;
    const [part, key] = field.key.split('.') as [string, string];
    let input: HTMLInputElement | HTMLSelectElement;
    if (field.options) {
      input = element('select');
      for (const option of field.options) input.append(new Option(option, option));
    } else {
      input = element('input');
      input.type = part === 'credentials' ? 'password' : 'text';
      if (part === 'credentials') input.autocomplete = 'off';
      input.placeholder = field.placeholder ?? '';
    }
    input.name = name;
    input.setAttribute('aria-label', field.label);
    if (same && part === 'config' && typeof current?.config[key] === 'string') {
      input.value = current.config[key] as string;
    }
    const isSet = same && current?.credentials_set.includes(secretName(field.key) as string);
    if (isSet && input instanceof HTMLInputElement) input.placeholder = 'Set (leave empty to keep it)';
    // A required secret already stored may stay empty (it is kept); everything else required is required.
    input.required = field.required === true && !isSet;
    label.append(element('span', field.label), input);
    box.append(label);
  }
  return box;
}

/** The destination form: the type, its fields and help, Save. */
function destinationForm(csrf: string, current: LogStream | null, saved: () => void): HTMLFormElement {
  const form = element('form', undefined, 'portal-add portal-setup');
  form.dataset.testid = 'portal-log-stream-form';
  const fieldset = element('fieldset');
  fieldset.append(element('legend', 'Destination'));
  const panels = DESTINATIONS.map((d) => destinationFields(d, current));
  const chosen = current?.type ?? DESTINATIONS[0]?.type;
  const show = (type: string) => {
    for (const panel of panels) {
      const on = panel.dataset.type === type;
      panel.hidden = !on;
      for (const input of panel.querySelectorAll('input, select')) (input as HTMLInputElement).disabled = !on;
    }
  };
  for (const d of DESTINATIONS) {
    const label = element('label');
    const radio = element('input');
    radio.type = 'radio';
    radio.name = 'type';
    radio.value = d.type;
    radio.checked = d.type === chosen;
    radio.addEventListener('change', () => show(d.type));
    label.append(radio, ` ${d.label}`);
    fieldset.append(label);
  }
  const button = element('button', current ? 'Save destination' : 'Start streaming');
  button.type = 'submit';
  const message = element('p', '', 'portal-add-message');
  form.append(fieldset, ...panels, button, message);
  show(chosen ?? '');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const type = (form.querySelector('input[name="type"]:checked') as HTMLInputElement | null)?.value ?? '';
    button.disabled = true;
    const res = await send(csrf, '/portal/session/log_stream', bodyOf(type, form));
    button.disabled = false;
    message.textContent = res.ok ? 'Saved.' : res.body;
    if (res.ok) saved();
  });
  return form;
}

/** The stream: destination, state, last error, last event delivered, Pause/Resume and Remove. */
function streamPanel(csrf: string, s: LogStream, changed: () => void): HTMLElement {
  const panel = element('section', undefined, 'portal-shown');
  panel.dataset.testid = 'portal-log-stream';
  panel.dataset.stream = s.id;
  panel.dataset.state = s.state;
  const state = element('span', STATE_TEXT[s.state], `portal-state portal-state-${s.state}`);
  state.dataset.testid = 'portal-log-stream-state';
  panel.append(element('h2', `Streaming to ${labelOf(s.type)}`), state);
  const facts = element('dl', undefined, 'portal-facts');
  const fact = (term: string, value: string, testid?: string) => {
    const dd = element('dd', value);
    if (testid) dd.dataset.testid = testid;
    facts.append(element('dt', term), dd);
  };
  for (const [key, value] of Object.entries(s.config)) fact(key, String(value));
  fact('Secrets set', s.credentials_set.length > 0 ? s.credentials_set.join(', ') : 'none');
  fact('Last event delivered', s.last_delivered_event_id ?? 'none yet', 'portal-log-stream-last-event');
  if (s.last_attempt_at) fact('Last attempt', new Date(s.last_attempt_at).toLocaleString());
  if (s.last_error) fact('Last error', s.last_error, 'portal-log-stream-error');
  panel.append(facts);
  const message = element('p', '', 'portal-add-message');
  const action = (text: string, run: () => Promise<void>) => {
    const button = element('button', text);
    button.type = 'button';
    button.addEventListener('click', () => void run());
    return button;
  };
  const call = async (path: string, method = 'POST') => {
    const res = await send(csrf, path, undefined, method);
    message.textContent = res.ok ? '' : res.body;
    if (res.ok) changed();
  };
  const toggle =
    s.state === 'inactive'
      ? action('Resume', () => call('/portal/session/log_stream/resume'))
      : action('Pause', () => call('/portal/session/log_stream/pause'));
  const remove = action('Remove stream', async () => {
    if (!confirm('Remove the log stream? Events stop being delivered and its credentials are deleted.')) return;
    await call('/portal/session/log_stream', 'DELETE');
  });
  panel.append(element('div', undefined, 'portal-actions'), message);
  panel.querySelector('.portal-actions')?.append(toggle, ' ', remove);
  panel.append(element('h3', 'Change the destination'), destinationForm(csrf, s, changed));
  return panel;
}

/** The log_streams page's panel; `onChange` runs after a write (the page remounts the widget). */
export function watchLogStreams(target: HTMLElement, csrf: string, onChange: () => void = () => {}): void {
  /** The stream last drawn, so a poll redraws (and clears what is typed) only on a change. */
  let drawn = '';
  const changed = () => {
    onChange();
    drawn = '';
    void poll();
  };
  const poll = watchPortalStatus<{ log_stream?: LogStream | null }>(target, (status) => {
    const stream = status.log_stream ?? null;
    const snapshot = JSON.stringify(stream);
    if (snapshot === drawn) return;
    drawn = snapshot;
    if (stream) target.replaceChildren(streamPanel(csrf, stream, changed));
    else target.replaceChildren(element('h2', 'Stream your audit logs'), destinationForm(csrf, null, changed));
  });
}
