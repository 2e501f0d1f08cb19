// The meta every procedure may carry: its REST route (trpc-to-openapi's `openapi`) and how the
// REST surface answers it. Apart from trpc.ts so the adapter (trpc-adapter.ts) reads it without
// importing the procedures' module, which imports the adapter.
import type { OpenApiMeta } from 'trpc-to-openapi';

export type Meta = OpenApiMeta<{
  /** The HTTP status of a success on the REST surface (default 200). */
  successStatus?: 200 | 201 | 204;
  /**
   * The success body carries a secret shown once (a new API key's value): an Idempotency-Key
   * replay still answers it, so the stored response is sealed under the master key.
   */
  secretResponse?: true;
  /** A DELETE that takes its input from a JSON body (the widgets' `sessions/revoke-all`), not the query. */
  bodyOnDelete?: true;
  /**
   * A POST whose input is its query string: the official widgets' `generate-link?intent=…`
   * sends no body (the direct dispatcher reads the query; the trpc-to-openapi bridge cannot).
   */
  queryInput?: true;
  /**
   * Path parameters that are secrets (an invitation's token): logs and traces show the path
   * with them replaced (rest-facade routes.ts `redact`); metrics only ever carry the template.
   */
  secretPathParams?: readonly string[];
}>;
