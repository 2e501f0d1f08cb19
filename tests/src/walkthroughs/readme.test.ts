import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, type SpawnedServer, spawnServer } from '../helpers/spawn-server.ts';

/** The walk-throughs run `npm start` on embedded storage, as the README does: once, in the PGlite run. */
const onPostgres = Boolean(inject('databaseUrl'));

/**
 * Runs the README's walk-throughs as written: every ```sh block of "## Walk-throughs", section by
 * section, in one bash per section (so variables and background jobs carry from block to block),
 * against the real server started on a fresh PGlite data directory, with the keys its first-start
 * banner prints. Every command that fails is reported by an ERR trap, so a block "exits 0" when
 * none of its commands failed.
 *
 * Substitutions, each because a test cannot do what a reader does:
 * - the ports 8080 (server), 5353 (DNS), 4000 (webhook receiver) and 2525 (SMTP) become free ports, so the
 *   test runs next to a developer's own server or another run; ATRIUM_URL points the CLI there;
 * - the test starts the server itself (`server/src/main.ts`, what `npm start` runs, without the
 *   bundle step) with ATRIUM_DATA_DIR set to a fresh directory, instead of running the blocks
 *   that start it: walk-through 3.1 (stop the first server, export two settings, `npm start`)
 *   becomes a restart of the server with that block's `export NAME=VALUE` lines, and so does
 *   walk-through 6.1 (the mail settings);
 * - the blocks run in a fresh directory inside this checkout (so `npx atrium`, `npm run` and
 *   demo.mjs's imports resolve here, and the files they write are not the reader's), and a
 *   ```js block whose first line is `// <name>` is saved under that name, as the README asks.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Only what the walk-throughs need from the caller's shell: never its ATRIUM_*, WORKOS_*, DATABASE_URL.
const SCRUBBED = /^(ATRIUM_|WORKOS_|DATABASE_URL$|DNS_SERVERS$|WEBHOOKS_ALLOW_PRIVATE$|SMTP_|PORT$|HOST$)/;

interface Block {
  lang: string;
  code: string;
}

/** The fenced blocks of each "### N." section under "## Walk-throughs". */
function walkthroughs(readme: string): Map<string, Block[]> {
  const start = readme.indexOf('\n## Walk-throughs');
  const end = readme.indexOf('\n## ', start + 1);
  const part = readme.slice(start, end);
  const sections = new Map<string, Block[]>();
  let current: Block[] | undefined;
  const lines = part.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const heading = line.match(/^### (\d+)\./);
    if (heading) {
      current = [];
      sections.set(heading[1] as string, current);
      continue;
    }
    const fence = line.match(/^```(\w+)/);
    if (fence && current) {
      const body: string[] = [];
      while (!(lines[++i] as string).startsWith('```')) body.push(lines[i] as string);
      current.push({ lang: fence[1] as string, code: body.join('\n') });
    }
  }
  return sections;
}

interface Ports {
  server: number;
  dns: number;
  receiver: number;
  smtp: number;
}

function substitutePorts(code: string, ports: Ports): string {
  return code
    .replace(/\b8080\b/g, String(ports.server))
    .replace(/\b5353\b/g, String(ports.dns))
    .replace(/\b4000\b/g, String(ports.receiver))
    .replace(/\b2525\b/g, String(ports.smtp));
}

interface SectionRun {
  /** stdout of each block, in order. */
  blocks: string[];
  /** Everything the section printed, background jobs included. */
  stdout: string;
  stderr: string;
  failures: string[];
}

/**
 * Runs a section's sh blocks in one bash (in its own process group, so its background jobs can be
 * ended with it). `until` is polled (bounded) on the whole output before the group is ended, for
 * output of background jobs that arrives after the last block.
 */
async function runSection(
  blocks: Block[],
  env: Record<string, string>,
  cwd: string,
  until: (stdout: string) => boolean = () => true,
): Promise<SectionRun> {
  const script = ['set -E', 'trap \'echo "::failed [$BASH_COMMAND] status $?" >&2\' ERR'];
  blocks.forEach((block, i) => {
    if (block.lang === 'sh') script.push(`echo "::block ${i}"`, block.code, `echo "::end ${i}"`);
    else {
      const name = block.code.match(/^\/\/ (\S+)/)?.[1];
      if (name) writeFileSync(join(cwd, name), `${block.code}\n`);
    }
  });
  script.push('echo "::done"');
  const child: ChildProcess = spawn('bash', ['-c', script.join('\n')], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const started = Date.now();
  while (!(stdout.includes('::done') && until(stdout)) && Date.now() - started < 10_000)
    await new Promise((resolve) => setTimeout(resolve, 50));
  try {
    process.kill(-(child.pid as number), 'SIGTERM');
  } catch {
    // the group is already gone
  }
  expect(code, stderr).toBe(0);
  const failures = stderr.split('\n').filter((line) => line.startsWith('::failed'));
  const outputs: string[] = [];
  blocks.forEach((block, i) => {
    if (block.lang !== 'sh') return;
    const from = stdout.indexOf(`::block ${i}\n`);
    const to = stdout.indexOf(`::end ${i}\n`);
    expect(from, `block ${i} did not start:\n${stdout}\n${stderr}`).toBeGreaterThanOrEqual(0);
    expect(to, `block ${i} did not end:\n${stdout}\n${stderr}`).toBeGreaterThan(from);
    outputs.push(stdout.slice(from + `::block ${i}\n`.length, to));
  });
  return { blocks: outputs, stdout, stderr, failures };
}

/** The `export NAME=VALUE` lines of a block. */
function exportsOf(code: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const match of code.matchAll(/^export (\w+)=(\S+)/gm)) vars[match[1] as string] = match[2] as string;
  return vars;
}

const sections = walkthroughs(readFileSync(join(ROOT, 'README.md'), 'utf8'));
const saved: Record<string, string | undefined> = {};
let ports: Ports;
let dataDir: string;
let cwd: string;
let server: SpawnedServer;
let shellEnv: Record<string, string>;

function section(n: string): Block[] {
  const blocks = sections.get(n);
  if (!blocks) throw new Error(`README has no walk-through ${n}`);
  return blocks.map((b) => ({ ...b, code: substitutePorts(b.code, ports) }));
}

beforeAll(async () => {
  if (onPostgres) return;
  const tools = spawnSync('bash', ['-c', 'command -v curl jq node npm npx'], { encoding: 'utf8' });
  expect(tools.stdout.trim().split('\n'), 'the walk-throughs need curl, jq, node and npm').toHaveLength(5);
  // spawnServer passes the test process's environment on: hide the caller's settings from it.
  for (const key of Object.keys(process.env))
    if (SCRUBBED.test(key)) {
      saved[key] = process.env[key];
      delete process.env[key];
    }
  ports = { server: await freePort(), dns: await freePort(), receiver: await freePort(), smtp: await freePort() };
  dataDir = mkdtempSync(join(tmpdir(), 'atrium-walkthrough-'));
  mkdirSync(join(ROOT, '.atrium'), { recursive: true });
  cwd = mkdtempSync(join(ROOT, '.atrium', 'walkthrough-'));
  server = await spawnServer({ ATRIUM_DATA_DIR: dataDir }, ports.server);
  const banner = server.output();
  const keys: Record<string, string> = {};
  for (const match of banner.matchAll(/export (ATRIUM_ADMIN_TOKEN|WORKOS_API_KEY|WORKOS_CLIENT_ID)=(\S+)/g))
    keys[match[1] as string] = match[2] as string;
  expect(Object.keys(keys).sort()).toEqual(['ATRIUM_ADMIN_TOKEN', 'WORKOS_API_KEY', 'WORKOS_CLIENT_ID']);
  shellEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    LANG: 'C.UTF-8',
    ATRIUM_URL: server.url,
    ...keys,
  };
}, 120_000);

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  for (const [key, value] of Object.entries(saved)) if (value !== undefined) process.env[key] = value;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

describe.skipIf(onPostgres)('README walk-throughs, as written', () => {
  it('1. organizations and domains', async () => {
    const run = await runSection(section('1'), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const out = run.blocks[0] as string;
    expect(out).toMatch(/"object":"organization".*"name":"Acme".*"external_id":"acme-1"/);
    expect(out).toMatch(/"domain":"acme.io".*"state":"pending"|"state":"pending".*"domain":"acme.io"/);
    expect(out).toMatch(/"name":"Acme Inc"/);
    expect(out).toContain('HTTP/1.1 204');
    expect(out).toContain('"code":"entity_not_found"');
  }, 60_000);

  it('2. users, memberships and groups', async () => {
    const run = await runSection(section('2'), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const out = run.blocks[0] as string;
    expect(out).toContain('{"object":"group"');
    expect(out).toContain('"On-call"\n"Engineering"\n');
    expect(out).toContain('"name": "Eng"');
    expect(out).toContain('"description": null');
    expect(out).toMatch(/\n204\n"Eng"\n"active"\n204\n204\n0\n$/);
  }, 60_000);

  it('3. verify a domain over DNS, see the event, receive a signed webhook', async () => {
    const blocks = section('3');
    // 3.1: stop the first server and start it again with the block's settings.
    const restart = exportsOf(blocks[0]?.code ?? '');
    expect(restart).toEqual({ DNS_SERVERS: `127.0.0.1:${ports.dns}`, WEBHOOKS_ALLOW_PRIVATE: 'true' });
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    server = await spawnServer({ ATRIUM_DATA_DIR: dataDir, ...restart }, ports.server);
    expect(server.output()).not.toContain('export WORKOS_API_KEY');

    const signed = /t=\d+, v1=[0-9a-f]{64}\n\{.*"event":"organization_domain.verified"/;
    const run = await runSection(blocks.slice(1), shellEnv, cwd, (out) => signed.test(out));
    expect(run.failures).toEqual([]);
    const [create, add, , verify, events] = run.blocks as [string, string, string, string, string];
    expect(create).toMatch(/"id": ?"we_\w+".*"secret"/s);
    expect(add).toMatch(
      /^\{"id":"org_domain_\w+","state":"pending","verification_prefix":"[\w-]+","verification_token":"\w+"\}$/m,
    );
    expect(run.stdout).toContain(`DNS server on 127.0.0.1:${ports.dns}`);
    expect(run.stdout).toContain('  acme-test.com NS ada.ns.cloudflare.com\n');
    expect(verify).toMatch(/"pending"\n(.*\n)*verified\n$/);
    expect(events).toMatch(/^\{"event":"organization_domain.verified","id":"org_domain_\w+","state":"verified"\}$/m);
    // 3.7: the receiver printed the signature header and the event.
    expect(run.stdout).toMatch(signed);
  }, 90_000);

  it('4. signing keys and the JWKS', async () => {
    const run = await runSection(section('4'), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const [jwks, rotation] = run.blocks as [string, string];
    expect(jwks).toMatch(/^HTTP\/1.1 200 OK/);
    expect(jwks).toMatch(/cache-control: public, max-age=300/i);
    expect(jwks).toContain('"kid":"key_');
    expect(jwks.trimEnd().endsWith('304')).toBe(true);
    expect(rotation.match(/key_\w+/g)?.length).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('5. agents, client tokens and connections with the official SDK', async () => {
    const run = await runSection(section('5'), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const [setup, member, demo, revoke] = run.blocks as [string, string, string, string];
    expect(setup).toMatch(/"registration_id":"agent_reg_/);
    expect(setup).toContain('inactive\nactive\n');
    expect(member.trim()).toBe('active');
    expect(demo).toMatch(/^local true org_\w+$/m);
    expect(demo).toMatch(/^remote true agent_reg_\w+ /m);
    expect(demo).toMatch(/^api key true$/m);
    expect(demo).toMatch(/^user_\w+ org_\w+ session_\w+ 900$/m);
    expect(demo).toMatch(/^true active revoked$/m);
    expect(demo).toContain('Acme Okta OktaSAML active');
    expect(revoke).toMatch(/status\s+revoked/);
    expect(revoke).toContain('{"valid":false,"registration_id":null,"expires_at":null}');
  }, 60_000);

  it('6. an invitation by e-mail, sent with curl and accepted with the SDK', async () => {
    const blocks = section('6');
    // 6.1: stop the server and start it again with the mail settings.
    const restart = exportsOf(blocks[0]?.code ?? '');
    expect(restart).toEqual({
      SMTP_URL: `smtp://127.0.0.1:${ports.smtp}`,
      SMTP_FROM: 'no-reply@initech.test',
      ATRIUM_INVITATION_URL: 'http://127.0.0.1:3000/invite/{token}',
    });
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    server = await spawnServer({ ATRIUM_DATA_DIR: dataDir, ...restart }, ports.server);

    const run = await runSection(blocks.slice(1), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const [smtp, send, accept] = run.blocks as [string, string, string];
    expect(smtp).toContain(`SMTP server on 127.0.0.1:${ports.smtp}`);
    expect(send).toContain(
      '{"state":"pending","email":"milton@example.com","role_slug":"member","accept_invitation_url":"http://127.0.0.1:3000/invite/',
    );
    expect(send).toContain("To: milton@example.com\nSubject: You're invited to join Initech\n");
    expect(send).toMatch(/^http:\/\/127\.0\.0\.1:3000\/invite\/[0-9A-Za-z]{43}$/m);
    expect(accept).toMatch(/^found pending milton@example.com member$/m);
    expect(accept).toMatch(/^accepted accepted user_\w+$/m);
    expect(accept).toMatch(/^member of Initech active$/m);
    expect(accept).toContain('invitation.accepted\ninvitation.created\n');
  }, 90_000);

  it('7. directory sync: a directory from the CLI, a user pushed over SCIM with curl, read with the SDK', async () => {
    const run = await runSection(section('7'), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const [setup, demo] = run.blocks as [string, string];
    expect(setup).toMatch(
      new RegExp(
        `^\\{"id":"(directory_\\w+)","state":"unlinked","scim_base_url":"http://127\\.0\\.0\\.1:${ports.server}/scim/v2/\\1","bearer_token":"scim_…"\\}$`,
        'm',
      ),
    );
    expect(setup).toMatch(/^\{"userName":"ada@example.com","active":true\}$/m);
    expect(demo).toBe(
      'Engines Okta okta scim v2.0 active\nada@example.com Ada Lovelace active\nada@example.com active true\n',
    );
  }, 90_000);

  it('8. single sign-on: a SAML connection to the loopback IdP, signed in with curl, the profile with the SDK', async () => {
    const run = await runSection(section('8'), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const [flow, demo] = run.blocks as [string, string];
    expect(flow).toMatch(
      new RegExp(
        `^\\{"state":"inactive","saml_acs_url":"http://127\\.0\\.0\\.1:${ports.server}/sso/saml/acs/conn_\\w+"\\}$`,
        'm',
      ),
    );
    expect(flow).toMatch(/^\{"uri":"http:\/\/127\.0\.0\.1:3000\/callback","default":true\}$/m);
    expect(flow).toMatch(/^http:\/\/127\.0\.0\.1:3000\/callback\?code=…&state=app-state-1$/m);
    expect(flow).toMatch(/^Reason: <code>replayed_assertion$/m);
    expect(demo).toBe('ada@engines.dev Ada Lovelace GenericSAML\ntrue\nactive\n400\n');
  }, 120_000);

  it('9. audit logs: an event recorded, exported by the worker, the CSV downloaded', async () => {
    const run = await runSection(section('9'), shellEnv, cwd);
    expect(run.failures).toEqual([]);
    const out = run.blocks[0] as string;
    expect(out).toContain('{"success":true}\n');
    expect(out).toContain('{"object":"audit_log_export","state":"pending"}\n');
    expect(out).toContain('ready\naction,actor_id,actor_type,actor_name\ndocument.updated,user_1,user,Bruce Wayne\n');
    expect(out).toMatch(/invalid_signature\n$/);
  }, 90_000);
});
