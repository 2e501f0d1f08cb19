import type { Register } from './cli-context.ts';

/**
 * `npx atrium dev-idp --port 7000`: the loopback SAML IdP for local sign-in (README walk-through).
 * samlify loads only when the command runs, not with every CLI command.
 */
export const registerDevIdp: Register = (program, ctx) => {
  program
    .command('dev-idp')
    .description('Run a SAML identity provider on loopback (login form, signed responses) for local SSO')
    .option('--port <port>', 'the port to listen on', '7000')
    .action(async (options: { port: string }) => {
      const { serveDevIdp } = await import('./dev-idp.ts');
      await serveDevIdp(Number(options.port), ctx.out);
    });
};
