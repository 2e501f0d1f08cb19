import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * The deployment artifacts, as far as this machine can check them: Docker cannot build or run
 * here, so the compose file is parsed (merge keys resolved as Compose resolves them) and its
 * topology asserted, and the Dockerfile is read for its stages, user and healthcheck. The same
 * topology runs as plain processes in processes.pg.test.ts (migrate once, two API processes,
 * two workers, one PostgreSQL).
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { disable?: boolean };
  ports?: string[];
}

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
  const { services } = compose;
  const apis = Object.entries(services).filter(([name]) => name.startsWith('api-'));

  it('holds PostgreSQL, a replica, a one-shot migration, two API processes and a worker', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'migrate', 'postgres', 'replica', 'worker']);
    expect(services.postgres?.image).toMatch(/^postgres:15/);
    expect(services.replica?.image).toMatch(/^postgres:15/);
    expect(JSON.stringify(services.replica)).toContain('pg_basebackup');
    expect(services.migrate?.command).toEqual(['node', 'server/dist/migrate.mjs']);
    expect(services.worker?.command).toEqual(['node', 'server/dist/worker.mjs']);
    expect(apis).toHaveLength(2);
  });

  it('runs migrations once, before the API processes and the worker, which do not migrate', () => {
    for (const name of ['api-1', 'api-2', 'worker']) {
      const service = services[name] as Service;
      expect(service.depends_on?.migrate).toEqual({ condition: 'service_completed_successfully' });
      expect(service.environment?.ATRIUM_MIGRATE).toBe('false');
    }
    expect(services.migrate?.depends_on?.postgres).toEqual({ condition: 'service_healthy' });
  });

  it('gives every Atrium process the same database, replica, secrets and public URL', () => {
    const envs = ['api-1', 'api-2', 'worker', 'migrate'].map((name) => services[name]?.environment ?? {});
    for (const key of [
      'DATABASE_URL',
      'DATABASE_REPLICA_URL',
      'ATRIUM_MASTER_KEY',
      'ATRIUM_ADMIN_TOKEN',
      'ATRIUM_PUBLIC_URL',
    ]) {
      const values = new Set(envs.map((env) => env[key]));
      expect(values.size, key).toBe(1);
      expect([...values][0], key).toBeTruthy();
    }
    expect(envs[0]?.DATABASE_URL).toContain('@postgres:5432/');
    expect(envs[0]?.DATABASE_REPLICA_URL).toContain('@replica:5432/');
    // Background jobs run in the worker service, not in the API processes.
    for (const [, api] of apis) expect(api.environment?.ATRIUM_WORKERS).toBe('false');
  });

  it('names only settings the server reads', () => {
    const config = read('server/src/config.ts');
    const names = new Set(apis.flatMap(([, api]) => Object.keys(api.environment ?? {})));
    // DATABASE_REPLICA_URL belongs to the read-replica work (issue #24 item 4).
    for (const name of names) if (name !== 'DATABASE_REPLICA_URL') expect(config, name).toContain(`${name}`);
  });

  it('checks health on the API processes only (the image checks /readyz)', () => {
    for (const [, api] of apis) expect(api.healthcheck?.disable).not.toBe(true);
    expect(services.worker?.healthcheck?.disable).toBe(true);
    expect(services.migrate?.healthcheck?.disable).toBe(true);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1) ?? '';

  it('builds in stages and runs only the built server, as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toContain('node server/build.mjs --all');
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toContain('COPY --from=build /app/server/dist server/dist');
    expect(runtime).not.toMatch(/COPY \. /);
    expect(runtime).not.toMatch(/COPY (routers|rest-facade|server\/src)/);
    expect(runtime).toMatch(/^CMD \[.*"server\/dist\/main\.mjs"\]$/m);
  });

  it('checks health on /readyz', () => {
    expect(runtime).toMatch(/^HEALTHCHECK [\s\S]*\/readyz/m);
  });
});
