/**
 * The load generator, run as its own process by bench/run.ts so that it never shares an event
 * loop with the server. Reads one LoadSpec (a JSON file named on the command line), warms up, prints `measuring`,
 * drives the measured run with autocannon, and prints one JSON line with the result.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  /** Paths used in turn (one per request), e.g. a sample of ids to read. */
  paths: string[];
  headers: Record<string, string>;
  /** Body text; `{n}` becomes a per-request counter, `{pick}` the next entry of `picks`. */
  body?: string;
  picks?: string[];
  /** `Authorization` values used in turn, one per request (the peer's many keys: bench/companions.ts). */
  authorizations?: string[];
  /**
   * Each pick is spent once (a one-use code, a SAML response): the run ends when every pick was
   * sent or after `durationSeconds`, whichever comes first, and the rate is over the time it took.
   */
  oneUse?: boolean;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  latency: { average: number; p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** How long the measured run took (seconds). */
  seconds: number;
}

function drive(spec: LoadSpec, seconds: number, tag: string): Promise<autocannon.Result> {
  let n = 0;
  const picks = spec.picks ?? [];
  const options: autocannon.Options = {
    url: spec.url,
    connections: spec.connections,
    duration: seconds,
    timeout: 10,
    requests: [
      {
        method: spec.method,
        headers: spec.headers,
        setupRequest: (request) => {
          const i = n;
          n += 1;
          const path = spec.paths[i % spec.paths.length] ?? '/';
          const next: autocannon.Request = { ...request, path };
          const authorizations = spec.authorizations;
          if (authorizations !== undefined && authorizations.length > 0) {
            next.headers = { ...spec.headers, Authorization: authorizations[i % authorizations.length] ?? '' };
          }
          if (spec.body !== undefined) {
            next.body = spec.body
              .replaceAll('{n}', `${tag}${i}`)
              .replaceAll('{pick}', picks.length > 0 ? (picks[i % picks.length] ?? '') : '');
          }
          return next;
        },
      },
    ],
  };
  if (!spec.oneUse) return autocannon(options);
  // `amount` makes autocannon ignore `duration`: the timer stops it at the duration instead.
  return new Promise((resolve, reject) => {
    const instance = autocannon({ ...options, amount: picks.length }, (error, result) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(result);
    });
    const timer = setTimeout(() => instance.stop(), seconds * 1000);
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as LoadSpec;
  const tag = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  if (spec.warmupSeconds > 0) await drive(spec, spec.warmupSeconds, `w${tag}`);
  process.stdout.write('measuring\n');
  const result = await drive(spec, spec.durationSeconds, `m${tag}`);
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = (stats as { count: number }).count;
  }
  const out: LoadResult = {
    requests: result.requests.total,
    rps: result.requests.total / (spec.oneUse ? Math.max(0.001, result.duration) : spec.durationSeconds),
    latency: {
      average: result.latency.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    seconds: spec.oneUse ? result.duration : spec.durationSeconds,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

await main();
