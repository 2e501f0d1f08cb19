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
  build?: string | { context: string; target?: string };
  profiles?: string[];
  volumes?: string[];
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
    const production = Object.entries(services).filter(([, service]) => service.profiles === undefined);
    expect(production.map(([name]) => name).sort()).toEqual([
      'api-1',
      'api-2',
      'migrate',
      'postgres',
      'replica',
      'worker',
    ]);
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

  it('builds the worker from the image target that has no /readyz health check', () => {
    expect(services.worker?.build).toEqual({ context: '.', target: 'worker' });
    expect(services.worker?.image).not.toBe(services['api-1']?.image);
  });

  it('has a development profile: one API process on embedded storage in a volume, nothing to set first', () => {
    const dev = Object.entries(services).filter(([, service]) => service.profiles?.includes('dev'));
    expect(dev.map(([name]) => name)).toEqual(['api']);
    const api = services.api as Service;
    expect(api.profiles).toEqual(['dev']);
    expect(api.environment?.DATABASE_URL).toBeUndefined();
    expect(api.depends_on).toBeUndefined();
    expect(api.ports).toEqual(['8080:8080']);
    expect(api.volumes).toEqual(['dev-data:/data']);
    expect((compose as { volumes?: Record<string, unknown> }).volumes).toHaveProperty('dev-data');
    // Compose interpolates every service before it picks a profile, so one required variable
    // (`${X:?…}` or `${X?…}`) anywhere would stop `docker compose up api` until it is set.
    expect(read('compose.yaml')).not.toMatch(/\$\{\w+:?\?/);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const stage = (name: string) => stages.find((text) => new RegExp(`^\\S+ AS ${name}$`, 'm').test(text)) ?? '';
  const runtime = stage('runtime');
  const worker = stage('worker');
  const api = stages.at(-1) ?? '';

  it('builds in stages and runs only the built server, as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toContain('node server/build.mjs --all');
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toContain('COPY --from=build /app/server/dist server/dist');
    expect(runtime).not.toMatch(/COPY \. /);
    expect(runtime).not.toMatch(/COPY (routers|rest-facade|server\/src)/);
    expect(api).toMatch(/^runtime AS api$/m);
    expect(api).toMatch(/^CMD \[.*"server\/dist\/main\.mjs"\]$/m);
  });

  it('gives the node user a data volume, where the embedded storage and its master key go', () => {
    // /app is root-owned, so without this the server cannot create its data directory.
    expect(runtime).toMatch(/^ENV .*\bATRIUM_DATA_DIR=\/data\b/m);
    const lines = runtime.split('\n');
    const chown = lines.findIndex((line) => /^RUN .*\bchown node:node \/data\b/.test(line));
    const volume = lines.findIndex((line) => /^VOLUME \/data$/.test(line));
    const user = lines.findIndex((line) => /^USER node$/.test(line));
    // Ownership set before VOLUME is what a new volume starts with; changes after it are lost.
    expect(chown).toBeGreaterThan(-1);
    expect(volume).toBeGreaterThan(chown);
    expect(user).toBeGreaterThan(volume);
  });

  it('checks health on /readyz in the API image only; the worker image has none', () => {
    expect(api).toMatch(/^HEALTHCHECK [\s\S]*\/readyz/m);
    expect(runtime).not.toMatch(/^HEALTHCHECK/m);
    expect(worker).toMatch(/^runtime AS worker$/m);
    expect(worker).toMatch(/^HEALTHCHECK NONE$/m);
    expect(worker).toMatch(/^CMD \[.*"server\/dist\/worker\.mjs"\]$/m);
  });
});
