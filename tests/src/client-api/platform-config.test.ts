import { loadConfig } from '@atrium/server';
import { describe, expect, it } from 'vitest';

describe('client surface settings', () => {
  it('GraphQL introspection is on unless NODE_ENV=production, where ATRIUM_GRAPHQL_INTROSPECTION=1 turns it on', () => {
    expect(loadConfig({}).graphqlIntrospection).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).graphqlIntrospection).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).graphqlIntrospection).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', ATRIUM_GRAPHQL_INTROSPECTION: '1' }).graphqlIntrospection).toBe(true);
    expect(() => loadConfig({ NODE_ENV: 'production', ATRIUM_GRAPHQL_INTROSPECTION: 'maybe' })).toThrow(
      /ATRIUM_GRAPHQL_INTROSPECTION/,
    );
  });

  it('ATRIUM_CORS_ORIGINS takes exact origins, none by default', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ ATRIUM_CORS_ORIGINS: 'https://app.example.com, http://localhost:3000' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
    ]);
    for (const bad of ['*', 'https://app.example.com/', 'app.example.com', 'https://*.example.com', 'ftp://x.com']) {
      expect(() => loadConfig({ ATRIUM_CORS_ORIGINS: bad })).toThrow(/ATRIUM_CORS_ORIGINS/);
    }
  });
});
