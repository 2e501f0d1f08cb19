import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { clientSettings } from '../organization/service.ts';

/** The widgets' SettingsResponse (WIDGETS-API.md §2.2); Atrium stores no logos. */
const SettingsResponse = z.object({
  object: z.literal('settings'),
  authkitOrigin: z.string(),
  teamName: z.string(),
  logoDarkIconPath: z.string().nullable(),
  logoDarkPath: z.string().nullable(),
  logoLightIconPath: z.string().nullable(),
  logoLightPath: z.string().nullable(),
});

const NO_LOGOS = { logoDarkIconPath: null, logoDarkPath: null, logoLightIconPath: null, logoLightPath: null };

/** WIDGETS-API.md §2.1 row 20. */
export const settingsWidgetProcedures = {
  settings: clientProcedure
    .meta({
      openapi: { method: 'GET', path: '/_widgets/settings', tags: ['Widgets'], summary: "The deployment's settings" },
    })
    .input(z.object({}))
    .output(SettingsResponse)
    .query(({ ctx }) => Object.assign({ object: 'settings' as const }, clientSettings(ctx.scope), NO_LOGOS)),
};
