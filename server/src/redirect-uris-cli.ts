import type { Register } from './cli-context.ts';

/**
 * `atrium redirect-uris ...`: where `/sso/authorize` may send a browser back with its code (issue
 * #37). A URI is https, or http on loopback only; exact, no fragment, no wildcard. One may be the
 * environment's default (used when an authorization names none, and after an SSO logout).
 */
export const registerRedirectUris: Register = (program, ctx) => {
  const uris = program.command('redirect-uris').description("Manage an environment's SSO redirect URIs");
  uris
    .command('add')
    .description('Register a redirect URI (https, or http for localhost/loopback)')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--uri <uri>', 'the redirect URI, matched exactly')
    .option('--default', 'make it the default redirect URI')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; uri: string; default?: boolean; json?: boolean }) => {
      ctx.print(options)(
        await ctx.client().redirectUris.create.mutate({
          environment: options.environment,
          uri: options.uri,
          default: options.default ?? false,
        }),
      );
    });
  uris
    .command('list')
    .description('List the redirect URIs of an environment')
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; json?: boolean }) => {
      const page = await ctx.client().redirectUris.list.query({ environment: options.environment, limit: 100 });
      ctx.print(options)(page.data);
    });
  uris
    .command('set-default')
    .description('Make a registered redirect URI the default (or no longer the default with --off)')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--uri <uri>', 'the redirect URI or its ruri_ id')
    .option('--off', 'clear its default flag')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; uri: string; off?: boolean; json?: boolean }) => {
      ctx.print(options)(
        await ctx.client().redirectUris.setDefault.mutate({
          environment: options.environment,
          uri: options.uri,
          default: !options.off,
        }),
      );
    });
  uris
    .command('remove')
    .description('Remove a redirect URI')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--uri <uri>', 'the redirect URI or its ruri_ id')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; uri: string; json?: boolean }) => {
      ctx.print(options)(
        await ctx.client().redirectUris.delete.mutate({ environment: options.environment, uri: options.uri }),
      );
    });
};
