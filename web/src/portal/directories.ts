// The dsync page's own part, under the official DirectorySync widget: the IT admin chooses the
// identity provider, names the directory and creates it; the page then shows the SCIM base URL and
// the bearer token once (with copy buttons) and that provider's steps. The organization's
// directories follow (state, counts, last sync) from the cookie-authenticated
// `GET /portal/session/status`, each with "Rotate token", which shows a new token once. The token
// is only ever in the answer of a create or a rotation; no read returns it.

import { copyable, element, send, watchPortalStatus } from './page.ts';

interface PortalDirectory {
  id: string;
  name: string;
  type: string;
  state: string;
  users: { active: number; inactive: number };
  groups: number;
  lastSyncAt: string | null;
  scimBaseUrl: string;
}

interface Shown {
  id: string;
  name: string;
  type: string;
  scim_base_url: string;
  bearer_token: string;
}

/** The providers the page sets up: the upstream directory type, a label, and the steps in the provider's console. */
const PROVIDERS: { type: string; label: string; steps: (string | [string, string])[] }[] = [
  {
    type: 'okta scim v2.0',
    label: 'Okta',
    steps: [
      'In the Okta Admin Console, open Applications > Applications and create (or open) the app integration for this application; on its General tab, under App Settings, set Provisioning to SCIM and save.',
      'On the Provisioning tab, choose Integration > Edit and select SCIM 2.0 as the connector.',
      ['SCIM connector base URL:', 'base'],
      'Unique identifier field for users: userName',
      'Supported provisioning actions: Push New Users, Push Profile Updates and Push Groups.',
      'Authentication Mode: HTTP Header.',
      ['Authorization (Bearer token):', 'token'],
      'Click Test Connector Configuration, then Save.',
      'Under Provisioning > To App, enable Create Users, Update User Attributes and Deactivate Users.',
      'Assign the people and groups to the app, and push the groups on the Push Groups tab.',
    ],
  },
  {
    type: 'azure scim v2.0',
    label: 'Microsoft Entra ID',
    steps: [
      'In the Microsoft Entra admin center, open Enterprise applications > New application > Create your own application, name it and choose "Integrate any other application you don\'t find in the gallery".',
      'Open the application, then Provisioning, and set the Provisioning Mode to Automatic.',
      ['Under Admin Credentials, Tenant URL:', 'base'],
      ['Secret Token:', 'token'],
      'Click Test Connection, then Save.',
      'Under Mappings, review the user and group attribute mappings (userName from userPrincipalName, the work e-mail from mail) and keep the provisioning of users and groups enabled.',
      'Assign users and groups under Users and groups, set the Provisioning Status to On and click Start provisioning.',
    ],
  },
  {
    type: 'generic scim v2.0',
    label: 'Other SCIM 2.0 provider',
    steps: [
      "In your identity provider's SCIM 2.0 provisioning settings, create a SCIM application.",
      ['SCIM base URL (endpoint):', 'base'],
      ['Authentication: HTTP header "Authorization: Bearer <token>" with the token:', 'token'],
      'Use userName as the unique identifier of users, and push users and groups.',
    ],
  },
];

const labelOf = (type: string) => PROVIDERS.find((p) => p.type === type)?.label ?? type;

/** The SCIM base URL and token, shown once, and the provider's steps (where they go). */
function shownPanel(shown: Shown, heading: string): HTMLElement {
  const panel = element('section', undefined, 'portal-shown');
  panel.dataset.testid = 'portal-directory-token';
  panel.dataset.directory = shown.id;
  const warning = element(
    'p',
    'Copy the bearer token now: it is shown only this once. If it is lost, rotate it to get a new one.',
    'portal-warning',
  );
  panel.append(
    element('h2', heading),
    element('h3', 'SCIM base URL'),
    copyable(shown.scim_base_url, 'scim_base_url', 'base URL'),
    element('h3', 'Bearer token'),
    copyable(shown.bearer_token, 'bearer_token', 'token'),
    warning,
  );
  const provider = PROVIDERS.find((p) => p.type === shown.type);
  if (provider) {
    const steps = element('ol', undefined, 'portal-steps');
    for (const step of provider.steps) {
      const item = element('li');
      if (typeof step === 'string') item.textContent = step;
      else {
        const value = step[1] === 'base' ? shown.scim_base_url : shown.bearer_token;
        item.append(
          element('span', `${step[0]} `),
          element('code', step[1] === 'base' ? value : 'the bearer token above'),
        );
      }
      steps.append(item);
    }
    panel.append(element('h3', `Set it up in ${provider.label}`), steps);
  }
  return panel;
}

/** "Set up a directory": the provider, a name, create. */
function setupForm(csrf: string, created: (shown: Shown) => void): HTMLFormElement {
  const form = element('form', undefined, 'portal-add portal-setup');
  const fieldset = element('fieldset');
  fieldset.append(element('legend', 'Identity provider'));
  PROVIDERS.forEach((p, index) => {
    const label = element('label');
    const radio = element('input');
    radio.type = 'radio';
    radio.name = 'type';
    radio.value = p.type;
    radio.checked = index === 0;
    label.append(radio, ` ${p.label}`);
    fieldset.append(label);
  });
  const name = element('input');
  name.name = 'name';
  name.required = true;
  name.maxLength = 256;
  name.placeholder = 'Employees';
  name.setAttribute('aria-label', 'Directory name');
  const button = element('button', 'Create directory');
  button.type = 'submit';
  const message = element('p', '', 'portal-add-message');
  form.append(fieldset, name, button, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const type = (form.querySelector('input[name="type"]:checked') as HTMLInputElement | null)?.value;
    button.disabled = true;
    const res = await send(csrf, '/portal/session/directories', { type, name: name.value });
    button.disabled = false;
    message.textContent = res.ok ? '' : res.body;
    if (res.ok) {
      name.value = '';
      created(res.body as Shown);
    }
  });
  return form;
}

function describe(d: PortalDirectory): string {
  const users = `${d.users.active} active ${d.users.active === 1 ? 'user' : 'users'}`;
  const inactive = `${d.users.inactive} inactive`;
  const groups = `${d.groups} ${d.groups === 1 ? 'group' : 'groups'}`;
  const synced = d.lastSyncAt ? `last sync ${new Date(d.lastSyncAt).toLocaleString()}` : 'no sync yet';
  return `${users}, ${inactive}, ${groups}; ${synced}`;
}

/** One directory: name, provider, state, counts, last sync, its base URL, and "Rotate token". */
function directoryRow(d: PortalDirectory, rotate: (d: PortalDirectory) => void): HTMLElement {
  const item = element('li');
  item.dataset.directory = d.id;
  item.dataset.state = d.state;
  const state = element('span', d.state, `portal-state portal-state-${d.state}`);
  const counts = element('p', describe(d), 'portal-counts');
  counts.dataset.active = String(d.users.active);
  counts.dataset.inactive = String(d.users.inactive);
  counts.dataset.groups = String(d.groups);
  const base = element('code', d.scimBaseUrl, 'portal-record');
  const button = element('button', 'Rotate token', 'portal-rotate');
  button.type = 'button';
  button.addEventListener('click', () => rotate(d));
  item.append(element('strong', d.name), ` ${labelOf(d.type)} `, state, counts, base, ' ', button);
  return item;
}

/** The dsync page's panel; `onChange` runs after a create or a rotation (the page remounts the widget). */
export function watchDirectories(target: HTMLElement, csrf: string, onChange: () => void = () => {}): void {
  const shown = element('div');
  const heading = element('h2', 'Directories');
  const list = element('ul', undefined, 'portal-directories');
  const message = element('p', '', 'portal-add-message');
  const show = (value: Shown, title: string) => {
    shown.replaceChildren(shownPanel(value, title));
    onChange();
    void poll();
  };
  const rotate = async (d: PortalDirectory) => {
    if (!confirm(`Rotate the token of ${d.name}? The current token stops working at once.`)) return;
    const res = await send(csrf, `/portal/session/directories/${encodeURIComponent(d.id)}/token`);
    message.textContent = res.ok ? '' : res.body;
    if (res.ok) show(res.body as Shown, `New token for ${d.name}`);
  };
  target.replaceChildren(
    element('h2', 'Set up a directory'),
    setupForm(csrf, (created) => show(created, `${created.name} is ready to connect`)),
    shown,
    heading,
    message,
    list,
  );
  const poll = watchPortalStatus<{ directories?: PortalDirectory[] }>(target, (status) => {
    const directories = status.directories ?? [];
    heading.hidden = directories.length === 0;
    list.replaceChildren(...directories.map((d) => directoryRow(d, rotate)));
  });
}
