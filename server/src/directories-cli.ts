import { DIRECTORY_TYPES } from '@atrium/db';
import { CommanderError } from 'commander';
import type { Register } from './cli-context.ts';

/**
 * `atrium directories …`: an organization's SCIM directories (issue #36). `create` and
 * `rotate-token` print the SCIM base URL and bearer token the identity provider is given, once.
 */
export const registerDirectories: Register = (program, ctx) => {
  const directories = program
    .command('directories')
    .description('Manage directories (SCIM directory sync) and their group -> role mapping');
  directories
    .command('create')
    .description('Create a directory of an organization: prints its SCIM base URL and bearer token (once)')
    .requiredOption('--environment <env>', 'environment id or name')
    .requiredOption('--organization <id>', 'organization id')
    .requiredOption('--type <type>', `directory type: ${DIRECTORY_TYPES.map((t) => `"${t}"`).join(', ')}`)
    .requiredOption('--name <name>', 'directory name')
    .option('--domain <domain>', "the organization's domain the directory is for (upstream's deprecated field)")
    .option('--json', 'print JSON')
    .action(
      async (options: {
        environment: string;
        organization: string;
        type: string;
        name: string;
        domain?: string;
        json?: boolean;
      }) => {
        const created = await ctx.client().directories.create.mutate({
          environment: options.environment,
          organization_id: options.organization,
          type: options.type as never,
          name: options.name,
          ...(options.domain === undefined ? {} : { domain: options.domain }),
        });
        ctx.print(options)(created);
      },
    );
  directories
    .command('rotate-token')
    .description("Replace a directory's SCIM bearer token (printed once); the old one stops working at once")
    .argument('<directory_id>', 'the directory_ id')
    .option('--json', 'print JSON')
    .action(async (directoryId: string, options: { json?: boolean }) => {
      ctx.print(options)(await ctx.client().directories.rotateToken.mutate({ directory_id: directoryId }));
    });
  directories
    .command('deactivate')
    .description(
      'Unlink a directory (event dsync.deactivated): its SCIM token stops working; rotate-token gives a new one',
    )
    .argument('<directory_id>', 'the directory_ id')
    .option('--json', 'print JSON')
    .action(async (directoryId: string, options: { json?: boolean }) => {
      ctx.print(options)(await ctx.client().directories.deactivate.mutate({ directory_id: directoryId }));
    });
  directories
    .command('delete')
    .description('Delete a directory with its users and groups (event dsync.deleted)')
    .argument('<directory_id>', 'the directory_ id')
    .option('--json', 'print JSON')
    .action(async (directoryId: string, options: { json?: boolean }) => {
      ctx.print(options)(await ctx.client().directories.delete.mutate({ directory_id: directoryId }));
    });
  directories
    .command('list')
    .description("List an environment's directories (tokens are not shown), optionally of one organization")
    .requiredOption('--environment <env>', 'environment id or name')
    .option('--organization <id>', 'organization id')
    .option('--json', 'print JSON')
    .action(async (options: { environment: string; organization?: string; json?: boolean }) => {
      const listed = await ctx.client().directories.list.query({
        environment: options.environment,
        limit: 100,
        order: 'desc',
        ...(options.organization === undefined ? {} : { organization_id: options.organization }),
      });
      ctx.print(options)(listed.data);
    });
  directories
    .command('groups')
    .description("List a directory's groups with the role each maps to")
    .argument('<directory_id>', 'the directory_ id')
    .option('--json', 'print JSON')
    .action(async (directoryId: string, options: { json?: boolean }) => {
      ctx.print(options)(await ctx.client().directories.groups.query({ directory_id: directoryId }));
    });
  directories
    .command('map-group')
    .description('Map a directory group to a role of its organization (its members get it), or to none')
    .argument('<group_id>', 'the directory_group_ id')
    .option('--role <slug>', "role slug (the organization's own role, else the environment's)")
    .option('--none', 'remove the mapping')
    .option('--json', 'print JSON')
    .action(async (groupId: string, options: { role?: string; none?: boolean; json?: boolean }) => {
      if ((options.role === undefined) === (options.none !== true)) {
        throw new CommanderError(2, 'atrium.directories', 'Pass exactly one of --role <slug> or --none.');
      }
      ctx.print(options)(
        await ctx.client().directories.mapGroup.mutate({ group_id: groupId, role_slug: options.role ?? null }),
      );
    });
};
