import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A throwaway PostgreSQL cluster on a free loopback port under /tmp, which a test may stop and
 * start at will (never the shared server). Runs as the `postgres` user when we are root.
 */
export class OwnPostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private static run(args: string[]): void {
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const cmd = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
      execFileSync('su', ['postgres', '-c', cmd], { stdio: 'pipe' });
    } else {
      execFileSync(args[0]!, args.slice(1), { stdio: 'pipe' });
    }
  }

  static async create(): Promise<OwnPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'atrium-pg-'));
    chmodSync(dir, 0o777);
    const data = join(dir, 'data');
    OwnPostgres.run([`${BIN}/initdb`, '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    const pg = new OwnPostgres(dir, await freePort());
    pg.start();
    return pg;
  }

  /**
   * A streaming replica of `primary` (a cluster of this class, whose initdb allows replication
   * from 127.0.0.1): `pg_basebackup -R` into a new directory, started on its own free port. It
   * follows the primary until stopped; `destroy` removes it.
   */
  static async replicaOf(primary: OwnPostgres): Promise<OwnPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'atrium-pg-replica-'));
    chmodSync(dir, 0o777);
    OwnPostgres.run([
      `${BIN}/pg_basebackup`,
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      join(dir, 'data'),
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    const replica = new OwnPostgres(dir, await freePort());
    replica.start();
    return replica;
  }

  start(): void {
    OwnPostgres.run([
      `${BIN}/pg_ctl`,
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'log'),
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=30`,
      '-w',
      'start',
    ]);
  }

  /** `fast`: in-flight sessions are terminated (57P01), as on a failover or an operator stop. */
  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    OwnPostgres.run([`${BIN}/pg_ctl`, '-D', join(this.dir, 'data'), '-m', mode, '-w', 'stop']);
  }

  destroy(): void {
    try {
      this.stop('immediate');
    } catch {
      // Already stopped.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
