/** web/dist, where `npm start` and the tests build the browser apps (`<dir>/console`, `<dir>/portal`). */
export const webDist: string;
/** The apps web/build.mjs builds. */
export const apps: readonly ('console' | 'portal')[];
/** Builds `only` (default both apps) into `<outdir>/<app>` (default web/dist) and returns `outdir`. */
export function buildWeb(outdir?: string, only?: readonly ('console' | 'portal')[]): Promise<string>;
