/**
 * What one SCIM `POST /Users` costs PostgreSQL, counted from the driver (bench/README.md, "Directory
 * sync"): a scratch database, Atrium's app in this process on a postgres.js client whose `debug`
 * hook records every statement it sends, `--warmup` POSTs, then `--posts` more (Okta's create body,
 * as bench/scim-load.ts sends it), `--concurrency` at a time (1: one after the other); prints the
 * statements per POST, the transactions, this process's CPU per POST (app and client together),
 * and the statements of the last POST in order (at 1 at a time).
 *
 *   npx tsx bench/scim-statements.ts [--pg-url url] [--posts 50] [--warmup 5] [--concurrency 1]
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { openDb, schema } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import { createEnvironment, DEFAULT_TOKEN_SETTINGS, type Deps, newCaches } from '@atrium/routers';
import { drizzle } from 'drizzle-orm/postgres-js';
import pino from 'pino';
import postgres from 'postgres';
import { scratchDatabase } from './in-process.ts';
import { oktaUserBody } from './scim-user.ts';

const { values: args } = parseArgs({
  options: {
    'pg-url': { type: 'string' },
    posts: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1' },
  },
});
const serverUrl = args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const posts = Number(args.posts);
const warmup = Number(args.warmup);
const concurrency = Math.max(1, Number(args.concurrency));

const scratch = await scratchDatabase(serverUrl, 'atrium_scimstmt');
const migrating = await openDb({ databaseUrl: scratch.url, poolSize: 2 });
await migrating.migrate();
await migrating.close();

const sent: string[] = [];
const recording = postgres(scratch.url, {
  max: 10,
  prepare: true,
  onnotice: () => {},
  connection: { plan_cache_mode: 'force_generic_plan', timezone: 'UTC' },
  debug: (_connection, query) => sent.push(query.replace(/\s+/g, ' ').trim()),
});
const db = drizzle(recording, { schema });
const deps: Deps = {
  db: db as never,
  driver: 'postgres',
  now: () => new Date(),
  log: pino({ level: 'silent' }),
  config: { apiKeyCacheTtlMs: 60_000, webhooksAllowPrivate: false },
  tokens: { ...DEFAULT_TOKEN_SETTINGS, masterKey: randomBytes(32), issuer: 'http://127.0.0.1' },
  caches: newCaches(),
};
const server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1', rateLimit: false }).handler);
try {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  deps.tokens.issuer = base;
  const env = await createEnvironment(deps, { name: 'scim-statements' });
  // A directory of a new organization, stored as bench/scim.ts stores one.
  const organizationId = `org_01SCIMSTATEMENTS${'0'.repeat(9)}`;
  const directoryId = `directory_01SCIMSTATEMENTS${'0'.repeat(9)}`;
  const token = `scim_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'a').slice(0, 40)}`;
  await recording.unsafe(
    `insert into organizations (id, environment_id, name, metadata, domain_count, created_at, updated_at)
     values ($1, $2, 'scim statements', '{}'::jsonb, 0, now(), now())`,
    [organizationId, env.environment_id],
  );
  await recording.unsafe(
    `insert into directories (id, environment_id, organization_id, type, name, state, external_key, token_hash,
            token_prefix, created_at, updated_at)
     values ($1, $2, $3, 'okta scim v2.0', 'scim statements', 'unlinked', $4, $5, $6, now(), now())`,
    [
      directoryId,
      env.environment_id,
      organizationId,
      randomBytes(8).toString('hex'),
      createHash('sha256').update(token).digest('hex'),
      token.slice(0, 13),
    ],
  );
  const post = async (i: number) => {
    const userName = `sync${i}@bench-directory.example.com`;
    const res = await fetch(`${base}/scim/v2/${directoryId}/Users`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/scim+json' },
      body: JSON.stringify(oktaUserBody(userName, `00u${i}`, i)),
    });
    if (res.status !== 201) throw new Error(`POST /Users ${i}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  for (let i = 0; i < warmup; i++) await post(i);
  sent.length = 0;
  let last: string[] = [];
  // This process's CPU (the app and the client sending the POSTs: an A/B figure, not the server's alone).
  const cpuBefore = process.cpuUsage();
  if (concurrency === 1) {
    for (let i = warmup; i < warmup + posts; i++) {
      const before = sent.length;
      await post(i);
      last = sent.slice(before);
    }
  } else {
    // `concurrency` workers, each sending its next POST once its last is answered (as scim-load.ts).
    let next = warmup;
    const worker = async () => {
      while (next < warmup + posts) await post(next++);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }
  const cpu = process.cpuUsage(cpuBefore);
  const begins = sent.filter((s) => /^begin\b/i.test(s)).length;
  console.log(
    `${posts} POST /Users (after ${warmup}, ${concurrency} at a time): ${sent.length} statements, ${(sent.length / posts).toFixed(2)}`,
  );
  console.log(`per POST, ${(begins / posts).toFixed(2)} transactions per POST.`);
  console.log(`CPU of this process (app and client): ${((cpu.user + cpu.system) / posts).toFixed(0)} µs per POST.`);
  console.log("The last POST's statements:");
  for (const [i, s] of last.entries()) console.log(`${String(i + 1).padStart(3)}. ${s.slice(0, 220)}`);
} finally {
  server.close();
  await recording.end();
  await scratch.drop();
}
