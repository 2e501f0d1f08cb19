/**
 * The GraphQL floor (graphql.ts) with Atrium's yoga plugins as Atrium configures them in the
 * benches (introspection on: graphql-armor's limits and the error mapping), a separate floor so
 * the floor stays as defined (bench/README.md, "GraphQL organization: knockouts").
 */
// graphql.ts adds the plugins when this file is the script run.
await import('./graphql.ts');

export {};
