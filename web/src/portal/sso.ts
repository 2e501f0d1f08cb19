// The sso page's own part, under the official AdminPortalSsoConnection widget: the IT admin picks
// the identity provider (Okta, Microsoft Entra ID, Google Workspace, another SAML 2.0 provider, or
// an OpenID Connect provider: its discovery endpoint, client id and secret instead of metadata),
// which makes the connection; the page shows what to paste into the provider (ACS URL, entity ID,
// metadata URL) and that provider's steps, then takes the provider's metadata (XML pasted, or its
// URL) and shows the connection's state, its IdP certificates with their expiry, and a test
// sign-in link whose first success activates the connection. Cookie-authenticated writes with the
// session's CSRF token; the status is polled from `GET /portal/session/status`.

import { copyable, element, send, watchPortalStatus } from './page.ts';

interface PortalSsoConnection {
  id: string;
  name: string;
  type: string;
  state: string;
  configured: boolean;
  sp: { acs_url?: string; entity_id?: string; metadata_url?: string; redirect_uri?: string };
  idp: { entity_id: string | null; sso_url: string | null; metadata_url: string | null };
  certificates: { fingerprint_sha256: string; not_before: string; not_after: string; expired: boolean }[];
  test_sign_in_url: string | null;
  test_sign_in_blocked: string | null;
}

type Fact = 'acs' | 'entity' | 'metadata' | 'redirect';

/** The providers the page sets up: the key the server knows, the connection type, a label, the steps. */
const PROVIDERS: { key: string; type: string; label: string; steps: (string | [string, Fact])[] }[] = [
  {
    key: 'okta',
    type: 'OktaSAML',
    label: 'Okta',
    steps: [
      'In the Okta Admin Console, open Applications > Applications > Create App Integration, choose SAML 2.0 and name the app.',
      ['Single sign-on URL (check "Use this for Recipient URL and Destination URL"):', 'acs'],
      ['Audience URI (SP Entity ID):', 'entity'],
      'Name ID format: EmailAddress; Application username: Email.',
      'Attribute statements: email = user.email, firstName = user.firstName, lastName = user.lastName.',
      'Finish, then on the Sign On tab copy the "Metadata URL" (or download the metadata XML) and give it below.',
      'Assign the people or groups who sign in with SSO to the app.',
    ],
  },
  {
    key: 'entra',
    type: 'AzureSAML',
    label: 'Microsoft Entra ID',
    steps: [
      'In the Microsoft Entra admin center, open Enterprise applications > New application > Create your own application (non-gallery), then Single sign-on > SAML.',
      ['Basic SAML Configuration, Identifier (Entity ID):', 'entity'],
      ['Reply URL (Assertion Consumer Service URL):', 'acs'],
      'Attributes & Claims: keep the user.mail, givenname and surname claims.',
      'Under SAML Certificates, copy the "App Federation Metadata Url" (or download "Federation Metadata XML") and give it below.',
      'Assign the users and groups who sign in with SSO under Users and groups.',
    ],
  },
  {
    key: 'google',
    type: 'GoogleSAML',
    label: 'Google Workspace',
    steps: [
      'In the Google Admin console, open Apps > Web and mobile apps > Add app > Add custom SAML app, and name it.',
      'On "Google Identity Provider details", download the IdP metadata and paste it below.',
      ['ACS URL:', 'acs'],
      ['Entity ID:', 'entity'],
      'Name ID format: EMAIL; Name ID: Basic Information > Primary email.',
      'Attribute mapping: First name > firstName, Last name > lastName.',
      'Turn the app ON for everyone (or the organizational units who sign in with SSO).',
    ],
  },
  {
    key: 'saml',
    type: 'GenericSAML',
    label: 'Other SAML 2.0 provider',
    steps: [
      'In your identity provider, create a SAML 2.0 application (service provider).',
      ['Assertion Consumer Service (ACS) URL, HTTP-POST binding:', 'acs'],
      ['SP Entity ID (Audience):', 'entity'],
      ['Or import the SP metadata from:', 'metadata'],
      'NameID: the e-mail address. Sign the response or the assertion (RSA-SHA256). Send email, firstName and lastName attributes.',
      "Give the provider's metadata below.",
    ],
  },
  {
    key: 'oidc',
    type: 'GenericOIDC',
    label: 'OpenID Connect provider',
    steps: [
      'In your identity provider, register a web application (confidential client, authorization code flow).',
      ['Redirect URI (sign-in redirect):', 'redirect'],
      'Allow the scopes openid, profile and email.',
      "Give the provider's issuer (or its discovery document URL), the client ID and the client secret below.",
    ],
  },
];

const providerOf = (type: string) => PROVIDERS.find((p) => p.type === type);

/** "Set up single sign-on": the identity provider, then Start. */
function startForm(csrf: string, started: () => void): HTMLFormElement {
  const form = element('form', undefined, 'portal-add portal-setup');
  form.dataset.testid = 'portal-sso-start';
  const fieldset = element('fieldset');
  fieldset.append(element('legend', 'Identity provider'));
  PROVIDERS.forEach((p, index) => {
    const label = element('label');
    const radio = element('input');
    radio.type = 'radio';
    radio.name = 'provider';
    radio.value = p.key;
    radio.checked = index === 0;
    label.append(radio, ` ${p.label}`);
    fieldset.append(label);
  });
  const button = element('button', 'Start setup');
  button.type = 'submit';
  const message = element('p', '', 'portal-add-message');
  form.append(fieldset, button, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const provider = (form.querySelector('input[name="provider"]:checked') as HTMLInputElement | null)?.value;
    button.disabled = true;
    const res = await send(csrf, '/portal/session/sso', { provider });
    button.disabled = false;
    message.textContent = res.ok ? '' : res.body;
    if (res.ok) started();
  });
  return form;
}

/** The IdP metadata: XML pasted, or its URL; Save configures the connection. */
function metadataForm(csrf: string, c: PortalSsoConnection, saved: () => void): HTMLFormElement {
  const form = element('form', undefined, 'portal-add portal-setup');
  form.dataset.testid = 'portal-sso-metadata';
  const xml = element('textarea');
  xml.name = 'idp_metadata_xml';
  xml.rows = 6;
  xml.placeholder = '<md:EntityDescriptor ...>';
  xml.setAttribute('aria-label', 'IdP metadata XML');
  const url = element('input');
  url.name = 'idp_metadata_url';
  url.type = 'url';
  url.placeholder = 'https://idp.example.com/metadata';
  url.setAttribute('aria-label', 'IdP metadata URL');
  const button = element('button', c.configured ? 'Update identity provider' : 'Save identity provider');
  button.type = 'submit';
  const message = element('p', '', 'portal-add-message');
  form.append(
    element('h3', 'Identity provider metadata'),
    element('p', 'Paste the metadata XML, or give its URL.'),
    xml,
    url,
    button,
    message,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    const body = xml.value.trim() !== '' ? { idp_metadata_xml: xml.value } : { idp_metadata_url: url.value };
    const res = await send(csrf, `/portal/session/sso/${encodeURIComponent(c.id)}`, body);
    button.disabled = false;
    message.textContent = res.ok ? 'Saved.' : res.body;
    if (res.ok) saved();
  });
  return form;
}

function factOf(c: PortalSsoConnection, fact: Fact): string {
  if (fact === 'redirect') return c.sp.redirect_uri ?? '';
  if (fact === 'acs') return c.sp.acs_url ?? '';
  if (fact === 'entity') return c.sp.entity_id ?? '';
  return c.sp.metadata_url ?? '';
}

/** An OIDC provider: discovery endpoint, client id and secret; Save configures the connection. */
function oidcForm(csrf: string, c: PortalSsoConnection, saved: () => void): HTMLFormElement {
  const form = element('form', undefined, 'portal-add portal-setup');
  form.dataset.testid = 'portal-sso-oidc';
  const input = (name: string, label: string, type = 'text') => {
    const el = element('input');
    el.name = name;
    el.type = type;
    el.setAttribute('aria-label', label);
    return el;
  };
  const discovery = input('discovery_endpoint', 'Issuer or discovery endpoint', 'url');
  discovery.placeholder = 'https://idp.example.com/.well-known/openid-configuration';
  const clientId = input('client_id', 'Client ID');
  const secret = input('client_secret', 'Client secret', 'password');
  secret.autocomplete = 'off';
  const button = element('button', c.configured ? 'Update identity provider' : 'Save identity provider');
  button.type = 'submit';
  const message = element('p', '', 'portal-add-message');
  form.append(element('h3', 'Identity provider'), discovery, clientId, secret, button, message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    const res = await send(csrf, `/portal/session/sso/${encodeURIComponent(c.id)}`, {
      discovery_endpoint: discovery.value,
      client_id: clientId.value,
      client_secret: secret.value,
    });
    button.disabled = false;
    message.textContent = res.ok ? 'Saved.' : res.body;
    if (res.ok) saved();
  });
  return form;
}

/** One connection: its state, the SP facts, the steps, the metadata form, certificates, the test link. */
function connectionPanel(csrf: string, c: PortalSsoConnection, changed: () => void): HTMLElement {
  const panel = element('section', undefined, 'portal-shown');
  panel.dataset.testid = 'portal-sso-connection';
  panel.dataset.connection = c.id;
  panel.dataset.state = c.state;
  const provider = providerOf(c.type);
  const state = element(
    'span',
    c.state === 'active' ? 'Active' : c.configured ? 'Configured: test sign-in to activate' : 'Setup in progress',
    `portal-state portal-state-${c.state}`,
  );
  state.dataset.testid = 'portal-sso-state';
  panel.append(element('h2', `${provider?.label ?? c.type}: ${c.name}`), state);
  panel.append(element('h3', 'Give these to your identity provider'));
  if (c.sp.acs_url) panel.append(element('p', 'ACS URL'), copyable(c.sp.acs_url, 'acs_url', 'ACS URL'));
  if (c.sp.entity_id) panel.append(element('p', 'SP entity ID'), copyable(c.sp.entity_id, 'entity_id', 'entity ID'));
  if (c.sp.metadata_url) {
    panel.append(element('p', 'SP metadata URL'), copyable(c.sp.metadata_url, 'metadata_url', 'metadata URL'));
  }
  if (c.sp.redirect_uri) {
    panel.append(element('p', 'Redirect URI'), copyable(c.sp.redirect_uri, 'redirect_uri', 'redirect URI'));
  }
  if (provider) {
    const steps = element('ol', undefined, 'portal-steps');
    for (const step of provider.steps) {
      const item = element('li');
      if (typeof step === 'string') item.textContent = step;
      else item.append(element('span', `${step[0]} `), element('code', factOf(c, step[1])));
      steps.append(item);
    }
    panel.append(element('h3', `Set it up in ${provider.label}`), steps);
  }
  panel.append(c.sp.redirect_uri ? oidcForm(csrf, c, changed) : metadataForm(csrf, c, changed));
  if (c.certificates.length > 0) {
    const list = element('ul', undefined, 'portal-certificates');
    list.dataset.testid = 'portal-sso-certificates';
    for (const cert of c.certificates) {
      const until = new Date(cert.not_after).toLocaleDateString('en-US', {
        year: 'numeric',
        month: 'long',
        day: 'numeric',
      });
      const item = element('li', `${cert.expired ? 'Expired' : 'Valid until'} ${until}`);
      item.dataset.notAfter = cert.not_after;
      item.append(' ', element('code', cert.fingerprint_sha256));
      list.append(item);
    }
    panel.append(element('h3', 'Signing certificates'), list);
  }
  if (c.idp.entity_id) panel.append(element('p', `Identity provider: ${c.idp.entity_id}`));
  if (c.test_sign_in_url) {
    const link = element('a', 'Test sign-in');
    link.href = c.test_sign_in_url;
    link.target = '_blank';
    link.rel = 'noopener';
    link.dataset.testid = 'portal-sso-test';
    panel.append(
      element('h3', 'Test it'),
      element('p', 'Sign in once through your identity provider: the first success activates the connection.'),
      link,
    );
  } else if (c.test_sign_in_blocked) {
    panel.append(element('p', c.test_sign_in_blocked, 'portal-add-message'));
  }
  return panel;
}

/** The sso page's panel; `onChange` runs after a write (the page remounts the widget). */
export function watchSso(target: HTMLElement, csrf: string, onChange: () => void = () => {}): void {
  /** The connections last drawn, so a poll redraws (and clears what is typed) only on a change. */
  let drawn = '';
  const changed = () => {
    onChange();
    drawn = '';
    void poll();
  };
  const poll = watchPortalStatus<{ connections?: PortalSsoConnection[] }>(target, (status) => {
    const connections = status.connections ?? [];
    const snapshot = JSON.stringify(connections);
    if (snapshot === drawn) return;
    drawn = snapshot;
    if (connections.length === 0) {
      target.replaceChildren(element('h2', 'Set up single sign-on'), startForm(csrf, changed));
    } else {
      target.replaceChildren(...connections.map((c) => connectionPanel(csrf, c, changed)));
    }
  });
}
