import { readFileSync } from 'node:fs';
import type { ErrorBody } from '@atrium/routers';
import { TRPCClientError } from '@trpc/client';
import { Command, CommanderError } from 'commander';
import {
  type AdminClient,
  type CliContext,
  type CliIo,
  createAdminClient,
  printer,
  type Register,
} from './cli-context.ts';
import { registerDevIdp } from './dev-idp-cli.ts';
import { registerDirectories } from './directories-cli.ts';
import { registerRedirectUris } from './redirect-uris-cli.ts';
import { registerSeed } from './seed.ts';

const registerEnvironments: Register = (program, ctx) => {
  const environments = program.command('environments').description('Manage environments');
  environments
    .command('create')
    .description('Create an environment with a client id and a first API key')
    .requiredOption('--name <name>', 'environment name')
    .option('--no-groups', 'turn the groups feature off')
    .option('--no-agents', 'turn the agents feature off')
    .option('--json', 'print JSON')
    .action(async (options: { name: string; groups: boolean; agents: boolean; json?: boolean }) => {
      const created = await ctx
        .client()
        .environments.create.mutate({ name: options.name, flags: { groups: options.groups, agents: options.agents } });
      ctx.print(options)(created);
    });
  environments
    .command('list')
    .description('List environments')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      ctx.print(options)(await ctx.client().environments.list.query());
    });
};

const registerAdminTokens: Register = (program, ctx) => {
  const tokens = program.command('admin-tokens').description('Manage admin tokens (the CLI sends ATRIUM_ADMIN_TOKEN)');
  tokens
    .command('create')
    .description(
      'Create an admin token (shown once); with ATRIUM_ADMIN_TOKEN set on the server, it lasts until a restart',
    )
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      ctx.print(options)(await ctx.client().adminTokens.create.mutate());
    });
  tokens
    .command('list')
    .description('List admin tokens by id; `current` marks the one in ATRIUM_ADMIN_TOKEN')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      ctx.print(options)(await ctx.client().adminTokens.list.query());
    });
  tokens
    .command('revoke')
    .description('Revoke an admin token by id, at once (the token in use cannot revoke itself)')
    .requiredOption('--id <id>', 'the admintok_ id (see admin-tokens list)')
    .option('--json', 'print JSON')
    .action(async (options: { id: string; json?: boolean }) => {
      ctx.print(options)(await ctx.client().adminTokens.revoke.mutate({ id: options.id }));
    });
};

const registerApiKeys: Register = (program, ctx) => {
  const apiKeys = program.command('api-keys').description('Manage API keys');
  apiKeys
    .command('create')
    .description('Create an API key (shown once)')
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--live', 'make an sk_live_ key')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; live?: boolean; json?: boolean }) => {
      const created = await ctx
        .client()
        .apiKeys.create.mutate({ environment: options.environment, live: options.live ?? false });
      ctx.print(options)(options.json ? { api_key: created.api_key } : created);
    });
  apiKeys
    .command('list')
    .description("List an environment's API keys (prefixes only)")
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; json?: boolean }) => {
      ctx.print(options)(await ctx.client().apiKeys.list.query({ environment: options.environment }));
    });
  apiKeys
    .command('revoke')
    .description('Revoke one API key, by id or by its listed prefix; refused at once')
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--id <id>', 'the apikey_ id (see api-keys list)')
    .option('--key-prefix <prefix>', 'the key prefix api-keys list shows (or the whole key)')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; id?: string; keyPrefix?: string; json?: boolean }) => {
      ctx.print(options)(
        await ctx
          .client()
          .apiKeys.revoke.mutate({ environment: options.environment, id: options.id, key_prefix: options.keyPrefix }),
      );
    });
};

const registerFlags: Register = (program, ctx) => {
  program
    .command('flags')
    .description('Manage feature flags')
    .command('set')
    .description('Turn a feature flag of an environment on or off')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--flag <name>', 'flag name (groups, agents)')
    .option('--on', 'turn it on')
    .option('--off', 'turn it off')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; flag: string; on?: boolean; off?: boolean; json?: boolean }) => {
      if (options.on === options.off) throw new CommanderError(2, 'atrium.flags', 'Pass exactly one of --on or --off.');
      ctx.print(options)(
        await ctx
          .client()
          .flags.set.mutate({ environment: options.environment, flag: options.flag, enabled: options.on === true }),
      );
    });
};

const registerSigningKeys: Register = (program, ctx) => {
  const keys = program.command('signing-keys').description("Manage an environment's token signing keys");
  keys
    .command('rotate')
    .description('Make a new key: published at once, signing after the rotation delay')
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--activate-after <seconds>', "seconds before the new key signs (default: the server's delay)")
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; activateAfter?: string; json?: boolean }) => {
      const after = options.activateAfter === undefined ? undefined : Number(options.activateAfter);
      if (after !== undefined && (!Number.isInteger(after) || after < 0)) {
        throw new CommanderError(2, 'atrium.signing-keys', '--activate-after takes a whole number of seconds.');
      }
      ctx.print(options)(
        await ctx
          .client()
          .signingKeys.rotate.mutate({ environment: options.environment, activate_after_seconds: after }),
      );
    });
  keys
    .command('list')
    .description("List an environment's signing keys (public parts only)")
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; json?: boolean }) => {
      ctx.print(options)(await ctx.client().signingKeys.list.query({ environment: options.environment }));
    });
};

const registerAgents: Register = (program, ctx) => {
  const agents = program.command('agents').description('Manage agent registrations');
  agents
    .command('register')
    .description('Register a verified agent of an organization: prints its API key and an access token (once)')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--organization <id>', 'organization id')
    .option('--user <id>', "the agent identity's userland user id")
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; organization: string; user?: string; json?: boolean }) => {
      ctx.print(options)(
        await ctx.client().agents.register.mutate({
          environment: options.environment,
          organization_id: options.organization,
          userland_user_id: options.user,
        }),
      );
    });
  agents
    .command('revoke')
    .description('Revoke a registration with its API keys and access tokens')
    .requiredOption('--registration <id>', 'registration id')
    .option('--json', 'print JSON')
    .action(async (options: { registration: string; json?: boolean }) => {
      ctx.print(options)(await ctx.client().agents.revoke.mutate({ registration_id: options.registration }));
    });
};

/** The SSO configuration flags of `connections create` and `connections configure`. */
interface SsoFlags {
  samlIdpMetadataFile?: string;
  samlIdpMetadataUrl?: string;
  samlSignRequests?: boolean;
  samlIdpInitiated?: boolean;
  oidcDiscoveryEndpoint?: string;
  oidcClientId?: string;
  oidcClientSecret?: string;
  oidcScopes?: string;
}

const withSsoFlags = (command: Command) =>
  command
    .option('--saml-idp-metadata-file <file>', "SAML: the identity provider's metadata XML, read from this file")
    .option('--saml-idp-metadata-url <url>', "SAML: the identity provider's metadata URL (fetched by the server)")
    .option('--saml-sign-requests', 'SAML: sign the AuthnRequests')
    .option('--saml-idp-initiated', 'SAML: allow IdP-initiated sign-in (off by default)')
    .option('--oidc-discovery-endpoint <url>', "OIDC: the provider's issuer or discovery document URL")
    .option('--oidc-client-id <id>', 'OIDC: the client id registered at the provider')
    .option('--oidc-client-secret <secret>', 'OIDC: the client secret (sealed on the server, never printed)')
    .option('--oidc-scopes <scopes>', 'OIDC: space-separated scopes (default "openid profile email")');

/** The OIDC configuration the flags give, if any (discovery endpoint and client id go together). */
function oidcConfigOf(flags: SsoFlags) {
  const given = [flags.oidcDiscoveryEndpoint, flags.oidcClientId, flags.oidcClientSecret, flags.oidcScopes];
  if (given.every((v) => v === undefined)) return undefined;
  if (flags.oidcDiscoveryEndpoint === undefined || flags.oidcClientId === undefined) {
    throw new CommanderError(1, 'atrium.flags', 'OIDC needs --oidc-discovery-endpoint and --oidc-client-id.');
  }
  const config: { discovery_endpoint: string; client_id: string; client_secret?: string; scopes?: string[] } = {
    discovery_endpoint: flags.oidcDiscoveryEndpoint,
    client_id: flags.oidcClientId,
  };
  if (flags.oidcClientSecret !== undefined) config.client_secret = flags.oidcClientSecret;
  if (flags.oidcScopes !== undefined) config.scopes = flags.oidcScopes.split(/\s+/).filter(Boolean);
  return config;
}

/** The SAML configuration the flags give, if any (the metadata file is read here, not by the server). */
function samlConfigOf(flags: SsoFlags) {
  const config: {
    idp_metadata_xml?: string;
    idp_metadata_url?: string;
    sign_requests?: boolean;
    idp_initiated_enabled?: boolean;
  } = {};
  if (flags.samlIdpMetadataFile !== undefined) {
    try {
      config.idp_metadata_xml = readFileSync(flags.samlIdpMetadataFile, 'utf8');
    } catch (error) {
      const reason = (error as { code?: string }).code ?? String(error);
      throw new CommanderError(1, 'atrium.file', `cannot read ${flags.samlIdpMetadataFile} (${reason}).`);
    }
  }
  if (flags.samlIdpMetadataUrl !== undefined) config.idp_metadata_url = flags.samlIdpMetadataUrl;
  if (flags.samlSignRequests) config.sign_requests = true;
  if (flags.samlIdpInitiated) config.idp_initiated_enabled = true;
  return Object.keys(config).length > 0 ? config : undefined;
}

const registerConnections: Register = (program, ctx) => {
  const connections = program.command('connections').description('Manage SSO connections');
  withSsoFlags(
    connections
      .command('create')
      .description(
        'Store a connection of an organization; with SSO flags it is configured at once, inactive until its first sign-in, and the SP facts are printed',
      )
      .requiredOption('--environment <env>', 'environment id or name')
      .requiredOption('--organization <id>', 'organization id')
      .requiredOption('--type <type>', 'connection type, e.g. OktaSAML')
      .requiredOption('--name <name>', 'connection name')
      .option('--inactive', 'create it inactive'),
  )
    .option('--json', 'print JSON')
    .action(
      async (
        options: {
          environment: string;
          organization: string;
          type: string;
          name: string;
          inactive?: boolean;
          json?: boolean;
        } & SsoFlags,
      ) => {
        const saml = samlConfigOf(options);
        const oidc = oidcConfigOf(options);
        const configured = saml !== undefined || oidc !== undefined;
        ctx.print(options)(
          await ctx.client().connections.create.mutate({
            environment: options.environment,
            organization_id: options.organization,
            connection_type: options.type as never,
            name: options.name,
            // A configured connection becomes active on its first successful sign-in.
            state: options.inactive || configured ? 'inactive' : 'active',
            saml,
            oidc,
          }),
        );
      },
    );
  withSsoFlags(
    connections
      .command('configure')
      .description("Configure an existing connection's SSO (SAML or OIDC) and print its SP facts")
      .requiredOption('--connection <id>', 'connection id'),
  )
    .option('--json', 'print JSON')
    .action(async (options: { connection: string; json?: boolean } & SsoFlags) => {
      const saml = samlConfigOf(options);
      const oidc = oidcConfigOf(options);
      if (saml === undefined && oidc === undefined) {
        throw new CommanderError(
          1,
          'atrium.flags',
          'give the configuration, e.g. --saml-idp-metadata-file F or --oidc-discovery-endpoint URL --oidc-client-id ID.',
        );
      }
      if (saml !== undefined && oidc !== undefined) {
        throw new CommanderError(1, 'atrium.flags', 'give SAML or OIDC flags, not both.');
      }
      const client = ctx.client().connections;
      ctx.print(options)(
        oidc !== undefined
          ? await client.configureOidc.mutate(Object.assign({ connection_id: options.connection }, oidc))
          : await client.configureSaml.mutate(Object.assign({ connection_id: options.connection }, saml)),
      );
    });
  connections
    .command('get')
    .description('Show a connection with its SP facts (ACS URL, entity id, metadata URL or redirect URI)')
    .requiredOption('--connection <id>', 'connection id')
    .option('--json', 'print JSON')
    .action(async (options: { connection: string; json?: boolean }) => {
      ctx.print(options)(await ctx.client().connections.get.query({ connection_id: options.connection }));
    });
  for (const verb of ['activate', 'deactivate', 'delete'] as const) {
    connections
      .command(verb)
      .description(`${verb[0]?.toUpperCase()}${verb.slice(1)} a connection`)
      .requiredOption('--connection <id>', 'connection id')
      .option('--json', 'print JSON')
      .action(async (options: { connection: string; json?: boolean }) => {
        ctx.print(options)(await ctx.client().connections[verb].mutate({ connection_id: options.connection }));
      });
  }
};

const registerDomains: Register = (program, ctx) => {
  program
    .command('domains')
    .description('Manage organization domains')
    .command('verify-manually')
    .description('Mark a domain verified (strategy manual), as the admin console of the specification does')
    .requiredOption('--domain-id <id>', 'the org_domain_ id')
    .requiredOption('--reason <text>', 'why (recorded on the organization_domain.verified event)')
    .option('--json', 'print JSON')
    .action(async (options: { domainId: string; reason: string; json?: boolean }) => {
      const input = { domain_id: options.domainId, reason: options.reason };
      const domain = await ctx.client().domains.verifyManually.mutate(input);
      const { verification_token: _token, ...shown } = domain;
      ctx.print(options)(shown);
    });
};

const registerWebhooks: Register = (program, ctx) => {
  const webhooks = program.command('webhooks').description('Manage webhook endpoints');
  webhooks
    .command('create')
    .description('Create a webhook endpoint; prints its signing secret once')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--url <url>', 'http(s) URL that receives the events')
    .option('--events <names>', 'comma-separated event names (default: every event)')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; url: string; events?: string; json?: boolean }) => {
      const events = options.events
        ?.split(',')
        .map((e) => e.trim())
        .filter((e) => e !== '');
      const created = await ctx.client().webhooks.create.mutate({
        environment: options.environment,
        url: options.url,
        ...(events && events.length > 0 ? { events } : {}),
      });
      ctx.print(options)(
        options.json
          ? { id: created.id, secret: created.secret }
          : { id: created.id, url: created.endpoint_url, events: created.events, secret: created.secret },
      );
    });
  webhooks
    .command('list')
    .description("List an environment's webhook endpoints (secrets are not shown)")
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; json?: boolean }) => {
      ctx.print(options)(await ctx.client().webhooks.list.query({ environment: options.environment }));
    });
  webhooks
    .command('disable')
    .description('Stop deliveries to an endpoint')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--id <id>', 'the we_ id')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; id: string; json?: boolean }) => {
      ctx.print(options)(
        await ctx.client().webhooks.disable.mutate({ environment: options.environment, id: options.id }),
      );
    });
  webhooks
    .command('delete')
    .description('Delete an endpoint and its pending deliveries')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--id <id>', 'the we_ id')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; id: string; json?: boolean }) => {
      ctx.print(options)(
        await ctx.client().webhooks.delete.mutate({ environment: options.environment, id: options.id }),
      );
    });
};

export const REGISTRARS: Register[] = [
  registerAdminTokens,
  registerEnvironments,
  registerApiKeys,
  registerFlags,
  registerSigningKeys,
  registerAgents,
  registerConnections,
  registerDirectories,
  registerDomains,
  registerWebhooks,
  registerRedirectUris,
  registerSeed,
  registerDevIdp,
];

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ETIMEDOUT']);

/** The network error behind a failed fetch (`fetch failed` wraps the socket's error), if any. */
function networkFailure(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    if (current instanceof TypeError && current.message === 'fetch failed') {
      const inner = (current.cause as { code?: unknown } | undefined)?.code;
      return typeof inner === 'string' ? inner : 'fetch failed';
    }
    current = current.cause;
  }
  return undefined;
}

/** What went wrong, for a person: the contract's message and code, then each field's reason. */
function describeError(error: unknown, url: string): string {
  const network = networkFailure(error);
  if (network) {
    return `cannot reach Atrium at ${url} (${network}). Is the server running? Point the CLI at another server with ATRIUM_URL=<url>.`;
  }
  if (error instanceof TRPCClientError) {
    const contract = (error.data as { contract?: { body?: ErrorBody } } | undefined)?.contract?.body;
    if (!contract) return error.message;
    const lines = [`${contract.message} (${contract.code})`];
    for (const field of contract.errors ?? []) lines.push(`  ${field.field}: ${field.message}`);
    if (contract.code === 'unauthorized') lines.push('  The server refused the admin token in ATRIUM_ADMIN_TOKEN.');
    return lines.join('\n');
  }
  return error instanceof Error ? error.message : String(error);
}

/** The version of the package that installs `atrium` (server/package.json), read when asked for. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can run it in-process. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const url = io.env.ATRIUM_URL || 'http://127.0.0.1:8080';
  let client: AdminClient | undefined;
  const ctx: CliContext = {
    client: () => {
      const token = io.env.ATRIUM_ADMIN_TOKEN;
      if (!token) {
        throw new CommanderError(
          1,
          'atrium.token',
          'ATRIUM_ADMIN_TOKEN is not set: export the admin token the server printed on its first start (ATRIUM_ADMIN_TOKEN=atrium_admin_...).',
        );
      }
      client ??= createAdminClient(url, token);
      return client;
    },
    print: (options) => printer(io, options.json === true),
    out: io.out,
  };
  const program = new Command('atrium')
    .description(`Atrium admin CLI (server: ${url}; token: ATRIUM_ADMIN_TOKEN)`)
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  for (const register of REGISTRARS) register(program, ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode !== 0 && !error.code.startsWith('commander.')) io.err(`error: ${error.message}\n`);
      return error.exitCode;
    }
    io.err(`error: ${describeError(error, url)}\n`);
    return 1;
  }
}
