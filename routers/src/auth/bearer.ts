// The credential of `Authorization: Bearer <token>`, read the same way for every token kind.

/** The token of `Authorization: Bearer <token>` (scheme in any case, any spacing), else undefined. */
export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
