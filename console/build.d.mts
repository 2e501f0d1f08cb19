/** console/dist, where `npm start` and the console tests build the console. */
export const consoleDist: string;
/** Builds the console into `outdir` (default console/dist) and returns the directory. */
export function buildConsole(outdir?: string): Promise<string>;
