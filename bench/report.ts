import type { BenchResults, ScenarioRun } from './results.ts';
import type { ReaderResult } from './scim-load.ts';

const fmt = (n: number | undefined | null, digits = 0) =>
  n === undefined || n === null || Number.isNaN(n)
    ? '—'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The run's note, and with `--repeat` every run's req/s (the row shows the median run). */
const noteOf = (r: ScenarioRun) =>
  [
    r.note,
    r.repeats ? `median of ${r.repeats.length} runs: ${r.repeats.map((x) => fmt(x.rps)).join(' / ')} req/s` : undefined,
  ]
    .filter(Boolean)
    .join('; ');

/** A scenario's highest RSS over all its runs (older results recorded only the median run's). */
const rssPeakOf = (r: ScenarioRun): number | undefined => {
  const peaks = [r.rssMaxMb, ...(r.repeats ?? []).map((x) => x.rssMaxMb)].filter(
    (mb): mb is number => typeof mb === 'number',
  );
  return peaks.length > 0 ? Math.max(...peaks) : undefined;
};

const sizeLabel = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n));

interface Target {
  name: string;
  target: string;
  measured: string;
  met: boolean | null;
}

function find(results: BenchResults, scenario: string, size: number): ScenarioRun | undefined {
  return results.runs.find((r) => r.scenario === scenario && r.size === size && r.available);
}

/** The issue's targets, judged on what this run measured (null: not measured in this run). */
export function evaluateTargets(results: BenchResults): Target[] {
  const sizes = results.settings.sizes;
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  const targets: Target[] = [];

  const get = sizes.map((s) => find(results, 'get_organization', s)).filter((r) => r !== undefined);
  const worstGet = get.reduce<ScenarioRun | undefined>(
    (w, r) => (w === undefined || (r.rps ?? 0) < (w.rps ?? 0) ? r : w),
    undefined,
  );
  targets.push({
    name: 'GET organization by id (every size)',
    target: '≥ 4,000 req/s, p99 ≤ 20 ms',
    measured: worstGet
      ? `worst ${fmt(worstGet.rps)} req/s, p99 ${fmt(Math.max(...get.map((r) => r.latency?.p99 ?? 0)))} ms`
      : '—',
    met: worstGet ? (worstGet.rps ?? 0) >= 4_000 && get.every((r) => (r.latency?.p99 ?? Infinity) <= 20) : null,
  });

  const first = find(results, 'list_first_page', 1_000) ?? find(results, 'list_first_page', smallest);
  targets.push({
    name: `list first page at ${sizeLabel(first?.size ?? 1_000)} orgs`,
    target: '≥ 2,500 req/s',
    measured: first ? `${fmt(first.rps)} req/s` : '—',
    met: first ? (first.rps ?? 0) >= 2_500 : null,
  });

  const firstLarge = find(results, 'list_first_page', largest);
  if (first && firstLarge && firstLarge !== first) {
    const ratio = (firstLarge.rps ?? 0) / (first.rps ?? 1);
    targets.push({
      name: `list first page at ${sizeLabel(largest)} vs ${sizeLabel(first.size)}`,
      target: largest >= 1_000_000 ? 'within 20%' : 'within 20% (at 1M with --full)',
      measured: `${fmt(firstLarge.rps)} req/s = ${fmt(ratio * 100)}%`,
      met: ratio >= 0.8,
    });
  }

  // Real tenants share domains: the filter must stay near a first page at every size.
  for (const size of sizes) {
    const shared = find(results, 'list_domains_shared', size);
    const page = find(results, 'list_first_page', size);
    if (!shared || !page) continue;
    const ratio = (shared.rps ?? 0) / (page.rps ?? 1);
    targets.push({
      name: `domains filter, 5 organizations per domain, at ${sizeLabel(size)} orgs`,
      target: 'within 20% of a first page',
      measured: `${fmt(shared.rps)} vs ${fmt(page.rps)} req/s = ${fmt(ratio * 100)}%`,
      met: ratio >= 0.8,
    });
  }

  const page1 = find(results, 'list_page1_limit100', largest);
  const deep = find(results, 'list_deep_page', largest);
  if (page1 && deep) {
    const ratio = (deep.rps ?? 0) / (page1.rps ?? 1);
    targets.push({
      name: `${deep.note ?? 'deep page'} of a limit=100 walk at ${sizeLabel(largest)}`,
      target: 'within 20% of page 1',
      measured: `${fmt(deep.rps)} vs ${fmt(page1.rps)} req/s = ${fmt(ratio * 100)}%`,
      met: ratio >= 0.8,
    });
  }

  const creates = sizes.map((s) => find(results, 'create_organization', s)).filter((r) => r !== undefined);
  const worstCreate = creates.reduce<ScenarioRun | undefined>(
    (w, r) => (w === undefined || (r.rps ?? 0) < (w.rps ?? 0) ? r : w),
    undefined,
  );
  targets.push({
    name: 'create organization, durable (every size)',
    target: '≥ 2,000 req/s',
    measured: worstCreate ? `worst ${fmt(worstCreate.rps)} req/s` : '—',
    met: worstCreate ? (worstCreate.rps ?? 0) >= 2_000 : null,
  });

  const jwks = sizes.map((s) => find(results, 'jwks', s)).filter((r) => r !== undefined);
  targets.push({
    name: 'JWKS',
    target: '≥ 10,000 req/s',
    measured: jwks.length > 0 ? `worst ${fmt(Math.min(...jwks.map((r) => r.rps ?? 0)))} req/s` : 'not available',
    met: jwks.length > 0 ? jwks.every((r) => (r.rps ?? 0) >= 10_000) : null,
  });

  // The client surfaces (issue #22): at 1k rows, ≥ 2,500 req/s and ≥ 1/8 of the baseline of the run's own round.
  for (const [scenario, label] of [
    ['widgets_members_list', 'widgets members list'],
    ['graphql_organization', 'client GraphQL organization'],
  ] as const) {
    const run = find(results, scenario, 1_000);
    if (!run) continue;
    const fraction = run.fractionOfBaseline;
    targets.push({
      name: `${label} at 1k`,
      target: '≥ 2,500 req/s and ≥ 1/8 (0.125) of the baseline',
      measured: `${fmt(run.rps)} req/s = ${fmt(fraction, 3)} of the baseline`,
      met: fraction === undefined ? null : (run.rps ?? 0) >= 2_500 && fraction >= 0.125,
    });
  }

  // Every run of Atrium counts, not only the median runs the table's other columns show; a
  // floor's or the peer's RSS is theirs, not the server's.
  const peaks = results.runs
    .filter((r) => r.size === largest && r.companion === undefined)
    .map(rssPeakOf)
    .filter((mb): mb is number => mb !== undefined);
  const rss = peaks.length > 0 ? Math.max(...peaks) : undefined;
  targets.push({
    name: `server RSS at ${sizeLabel(largest)} orgs under load`,
    target: largest >= 1_000_000 ? '≤ 150 MB' : '≤ 150 MB (at 1M with --full)',
    measured: rss === undefined ? '—' : `max ${fmt(rss, 1)} MB`,
    met: rss === undefined ? null : rss <= 150,
  });

  targets.push(...scimTargets(results));

  targets.push({
    name: 'start to ready on PostgreSQL',
    target: '≤ 2 s',
    measured:
      `fresh database (all migrations applied): ${fmt(results.startup.freshMs)} ms` +
      (results.startup.restartMs === null
        ? ''
        : `; restart at ${sizeLabel(results.startup.restartOrganizations ?? 0)} orgs: ${fmt(results.startup.restartMs)} ms`),
    met: Math.max(results.startup.freshMs, results.startup.restartMs ?? 0) <= 2_000,
  });
  return targets;
}

/** Issue #36's scale targets, from the SCIM scenarios (bench/scim.ts), when they ran. */
function scimTargets(results: BenchResults): Target[] {
  const scim = results.scim;
  if (!scim) return [];
  const targets: Target[] = [];
  const sync = scim.initialSync;
  if (sync) {
    const r = sync.result;
    targets.push({
      name: `SCIM initial sync: ${fmt(sync.users)} user POSTs at concurrency ${sync.concurrency}, one process`,
      target: '≥ 400 users/s',
      measured: `${fmt(r.users.perSecond)} users/s (${fmt(r.users.seconds, 1)} s; statuses ${JSON.stringify(r.users.statuses)})`,
      met: r.users.perSecond >= 400 && (r.users.statuses['201'] ?? 0) === sync.users,
    });
    const memberships = sync.groups * Math.round(r.groups.memberships / Math.max(1, sync.groups));
    const kept =
      sync.stored.directoryUsers === sync.users &&
      sync.stored.groups === sync.groups &&
      sync.stored.memberships === memberships;
    targets.push({
      name: 'SCIM initial sync loses nothing',
      target: `${fmt(sync.users)} directory users, ${fmt(sync.groups)} groups, ${fmt(memberships)} memberships stored`,
      measured: `${fmt(sync.stored.directoryUsers)} / ${fmt(sync.stored.groups)} / ${fmt(sync.stored.memberships)}; provisioned users ${fmt(sync.stored.provisionedUsers)}, directory-managed memberships ${fmt(sync.stored.managedMemberships)}`,
      met: kept,
    });
    const { alone, during } = sync.reader;
    targets.push({
      name: "another tenant's reads during the sync (GET /organizations/:id, 2 in flight)",
      target: 'p95 kept: ≤ 2× its p95 without the sync',
      measured: `p95 ${fmt(during.p95, 1)} ms during vs ${fmt(alone.p95, 1)} ms alone = ${fmt(during.p95 / Math.max(0.01, alone.p95), 2)}×`,
      met: during.p95 <= 2 * alone.p95,
    });
    const machine = sync.floor?.reader;
    if (machine) {
      targets.push({
        name: "another tenant's reads during the sync against during the floor's sync (the machine's share)",
        target:
          'p95 ≤ 1.1× its p95 during the floor’s sync (proposed in place of "kept" where the floor cannot keep it)',
        measured: `p95 ${fmt(during.p95, 1)} ms vs ${fmt(machine.p95, 1)} ms during the floor's sync = ${fmt(during.p95 / Math.max(0.01, machine.p95), 2)}×; the floor's sync alone takes it to ${fmt(machine.p95 / Math.max(0.01, alone.p95), 2)}× its p95 alone`,
        met: during.p95 <= 1.1 * machine.p95,
      });
    }
  }
  const patch = scim.groupPatch;
  if (patch && patch.ms.length > 0) {
    targets.push({
      name: `one PATCH adding ${fmt(patch.members)} members to a group`,
      target: '< 2 s',
      measured: `${patch.ms.map((ms) => fmt(ms)).join(' / ')} ms (statuses ${patch.statuses.join(', ')}; stored ${patch.stored.join(', ')})`,
      met: Math.max(...patch.ms) < 2_000 && patch.stored.every((n) => n === patch.members),
    });
  }
  const deep = scim.deepPage;
  if (deep) {
    const ratio = (deep.deep.rps ?? 0) / Math.max(1, deep.first.rps ?? 0);
    targets.push({
      name: `SCIM GET /Users?startIndex=90001&count=100 at ${sizeLabel(deep.users)} users`,
      target: 'within 2× the first page (≥ 0.5× its req/s)',
      measured: `${fmt(deep.deep.rps)} vs ${fmt(deep.first.rps)} req/s = ${fmt(ratio, 2)}×; p50 ${fmt(deep.deep.latency?.p50)} vs ${fmt(deep.first.latency?.p50)} ms`,
      met: ratio >= 0.5,
    });
  }
  return targets;
}

/** The SCIM scenarios' own section: the sync's figures and the two pages' runs. */
function scimLines(results: BenchResults): string[] {
  const scim = results.scim;
  if (!scim) return [];
  const lines = ['## Directory sync (issue #36)', ''];
  if (scim.reason) lines.push(`Not available: ${scim.reason}`, '');
  const sync = scim.initialSync;
  if (sync) {
    const r = sync.result;
    const cpu = sync.cpuSeconds;
    lines.push(
      `**Initial sync**: ${fmt(sync.users)} POST /Users at ${sync.concurrency} in flight in ${fmt(r.users.seconds, 1)} s = ` +
        `**${fmt(r.users.perSecond)} users/s** (latency p50 ${fmt(r.users.latency.p50, 1)} / p95 ${fmt(r.users.latency.p95, 1)} / ` +
        `p99 ${fmt(r.users.latency.p99, 1)} ms; statuses ${JSON.stringify(r.users.statuses)}); then ${fmt(sync.groups)} POST /Groups ` +
        `each followed by one PATCH adding its members (${fmt(r.groups.memberships)} memberships) in ${fmt(r.groups.seconds, 1)} s ` +
        `(statuses ${JSON.stringify(r.groups.statuses)} / ${JSON.stringify(r.groups.patchStatuses)}).` +
        (cpu
          ? ` CPU over the sync: Atrium ${fmt(cpu.server, 1)} s, PostgreSQL ${fmt(cpu.postgres, 1)} s, the load generator ${fmt(cpu.load ?? undefined, 1)} s.`
          : ''),
    );
    lines.push('');
    lines.push(
      `Stored afterwards: ${fmt(sync.stored.directoryUsers)} directory users, ${fmt(sync.stored.groups)} groups, ` +
        `${fmt(sync.stored.memberships)} memberships; ${fmt(sync.stored.provisionedUsers)} provisioned users, ` +
        `${fmt(sync.stored.managedMemberships)} active directory-managed memberships.`,
    );
    if (r.failures.length > 0) lines.push('', `First failures: ${r.failures.map((f) => `\`${f}\``).join('; ')}`);
    const floor = sync.floor;
    if (floor) {
      const perUser = (seconds: number | undefined) => fmt(((seconds ?? 0) * 1000) / Math.max(1, sync.users), 2);
      const users = sync.usersCpuSeconds;
      lines.push(
        '',
        `**Against its floor** (bench/floors/scim.ts, the same users phase right after, a fresh directory): ` +
          `floor ${fmt(floor.result.users.perSecond)} users/s (statuses ${JSON.stringify(floor.result.users.statuses)}), ` +
          `Atrium / floor = **${fmt(floor.ratio, 2)}**; CPU ms per user over the users phase: ` +
          `floor ${perUser(floor.cpuSeconds?.server)} + PostgreSQL ${perUser(floor.cpuSeconds?.postgres)}` +
          (users ? `, Atrium ${perUser(users.server)} + PostgreSQL ${perUser(users.postgres)}` : '') +
          `; same answer (a probe's 201, ids and times blanked): ${floor.sameShape}.`,
      );
    }
    lines.push('');
    const { alone, during } = sync.reader;
    lines.push(
      '| another tenant, GET /organizations/:id (2 in flight) | requests | req/s | p50 ms | p95 ms | p99 ms | max ms |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|');
    const rows: [string, ReaderResult][] = [
      ['alone', alone],
      ['during the sync', during],
    ];
    if (sync.floor?.reader) rows.push(["during the floor's sync (the machine's share)", sync.floor.reader]);
    for (const [label, x] of rows) {
      lines.push(
        `| ${label} | ${fmt(x.requests)} | ${fmt(x.perSecond)} | ${fmt(x.p50, 1)} | ${fmt(x.p95, 1)} | ${fmt(x.p99, 1)} | ${fmt(x.max, 1)} |`,
      );
    }
    lines.push('');
  }
  const patch = scim.groupPatch;
  if (patch) {
    lines.push(
      `**PATCH adding ${fmt(patch.members)} members** to a new group, ${patch.ms.length} times: ` +
        `${patch.ms.map((ms) => fmt(ms)).join(' / ')} ms (statuses ${patch.statuses.join(', ')}, members stored ${patch.stored.join(', ')})` +
        (patch.failures.length > 0 ? `; failures: ${patch.failures.join('; ')}` : '') +
        '.',
    );
    lines.push('');
  }
  const deep = scim.deepPage;
  if (deep) {
    lines.push(
      `**Offset pages** at ${fmt(deep.users)} seeded directory users (seeded set-based in ${fmt(deep.seedSeconds, 1)} s):`,
    );
    lines.push('');
    lines.push('| request | req/s | p50 ms | p99 ms | non-2xx | CPU µs/req Atrium / PostgreSQL |');
    lines.push('|---|---:|---:|---:|---:|---:|');
    for (const run of [deep.first, deep.deep]) {
      const cpu = run.cpuUsPerRequest
        ? `${fmt(run.cpuUsPerRequest.server)} / ${fmt(run.cpuUsPerRequest.postgres)}`
        : '—';
      lines.push(
        `| ${run.title} | ${fmt(run.rps)} | ${fmt(run.latency?.p50)} | ${fmt(run.latency?.p99)} | ${fmt(run.non2xx)} | ${cpu} |`,
      );
    }
    lines.push('');
  }
  return lines;
}

/**
 * The floors and the peer (bench/companions.ts): Atrium / each, from the median runs, and round
 * by round (each pair measured one after the other in the same round).
 */
function companionLines(results: BenchResults): string[] {
  const lines: string[] = [];
  const paired = results.runs.filter((r) => r.available && r.companion);
  const s = results.settings;
  if (paired.length > 0) {
    lines.push('## Floors and peer');
    lines.push('');
    lines.push(
      `Atrium / each, req/s, both from autocannon (${s.connections} connections, its own process) in the same round, ` +
        'the companion right after the Atrium scenario. The ratio is of the median runs; per round in the last column.',
    );
    lines.push('');
    lines.push(
      '| scenario | size | kind | Atrium req/s | its req/s | Atrium / it | target | met | CPU µs/req it / PostgreSQL | per round | note |',
    );
    lines.push('|---|---:|---|---:|---:|---:|---:|---|---:|---|---|');
    for (const c of paired) {
      const info = c.companion;
      const atrium = results.runs.find((r) => r.available && r.scenario === info?.of && r.size === c.size);
      if (!info || !atrium) continue;
      const ratio = (atrium.rps ?? 0) / Math.max(1, c.rps ?? 0);
      const rounds =
        atrium.repeats && c.repeats
          ? atrium.repeats.map((a, i) => fmt(a.rps / Math.max(1, c.repeats?.[i]?.rps ?? 0), 2)).join(' / ')
          : '—';
      const cpu = c.cpuUsPerRequest ? `${fmt(c.cpuUsPerRequest.server)} / ${fmt(c.cpuUsPerRequest.postgres)}` : '—';
      // Beside the peer, the floor of the same scenario in the same rounds: whether Atrium / peer's
      // target is within this stack's reach at all (floor / peer).
      const floor = results.runs.find(
        (r) => r.available && r.companion?.kind === 'floor' && r.companion.of === info.of && r.size === c.size,
      );
      const floorRounds =
        floor?.repeats && c.repeats
          ? ` (per round ${floor.repeats.map((f, i) => fmt(f.rps / Math.max(1, c.repeats?.[i]?.rps ?? 0), 2)).join(' / ')})`
          : '';
      const note =
        info.kind === 'floor'
          ? info.sameAnswer === true
            ? 'same JSON as Atrium'
            : `**answer differs from Atrium's** (${String(info.sameAnswer)})`
          : floor
            ? `floor / peer = **${fmt((floor.rps ?? 0) / Math.max(1, c.rps ?? 0), 2)}**${floorRounds}`
            : '';
      lines.push(
        `| ${info.of} | ${sizeLabel(c.size)} | ${info.kind} ${info.name} | ${fmt(atrium.rps)} | ${fmt(c.rps)} | ${fmt(ratio, 2)} | ` +
          `${info.target === undefined ? '—' : `≥ ${fmt(info.target, 2)}`} | ` +
          `${info.target === undefined ? '—' : ratio >= info.target ? 'yes' : '**no**'} | ${cpu} | ${rounds} | ${note} |`,
      );
    }
    lines.push('');
  }
  const check = results.statisticsCheck;
  if (check) {
    const ratio = (check.filter.rps ?? 0) / Math.max(1, check.firstPage.rps ?? 0);
    lines.push('## Statistics after bulk creates');
    lines.push('');
    lines.push(
      `${fmt(check.creates)} creates through the API in ${fmt(check.createSeconds, 1)} s; ` +
        (check.analyzedAfterSeconds === null
          ? 'Atrium had not analyzed the tables by the end of the wait; '
          : `Atrium analyzed the tables ${fmt(check.analyzedAfterSeconds, 1)} s after the last create (no ANALYZE by the bench); `) +
        `then the domains filter ${fmt(check.filter.rps)} req/s against the first page ${fmt(check.firstPage.rps)} req/s: ` +
        `**${fmt(ratio, 2)}×** (target ≥ 0.5: ${ratio >= 0.5 ? 'met' : '**not met**'}).`,
    );
    lines.push('');
  }
  return lines;
}

export function renderMarkdown(results: BenchResults): string {
  const lines: string[] = [];
  const s = results.settings;
  lines.push(`# Atrium benchmark, ${results.startedAt}`);
  lines.push('');
  lines.push(
    `Command \`${results.command}\` at commit \`${results.commit}\`. ` +
      `Atrium run ${s.server === 'tsx' ? 'from its sources by `node --import tsx` (comparison)' : 'as `npm start` runs it (the esbuild bundle `server/dist/main.mjs` by plain node)'}. ` +
      `Node ${results.machine.node}, ${results.machine.cpus} × ${results.machine.cpuModel}, ` +
      `${results.machine.memoryGb} GB; ${results.machine.postgres.split(' on ')[0]} ` +
      `(synchronous_commit=${s.synchronousCommit}, fsync=${s.fsync}). autocannon, ${s.connections} connections, ` +
      `${s.durationSeconds} s per scenario after ${s.warmupSeconds} s of warm-up, load generator in its own process.` +
      ((s.repeat ?? 1) > 1
        ? ` Each scenario ran ${s.repeat} times per size, the list of scenarios repeated in turn; each row is the run with the median throughput.`
        : ''),
  );
  lines.push('');
  if (results.baseline) {
    const b = results.baseline;
    lines.push(
      `**Baseline** (bare \`node:http\`, fixed 300-byte JSON): ${fmt(b.rps)} req/s, ` +
        `p50 ${b.latency.p50} ms, p99 ${b.latency.p99} ms.`,
    );
    lines.push('');
  }
  if (results.speedChecks && results.speedChecks.length > 1) {
    // The baseline again before each round: how fast the machine was when each figure was taken.
    const bySize = new Map<number, number[]>();
    for (const check of results.speedChecks) bySize.set(check.size, [...(bySize.get(check.size) ?? []), check.rps]);
    lines.push(
      `**Machine speed** (the baseline again before each round; each row's × baseline is against its round's): ` +
        [...bySize].map(([size, rps]) => `${sizeLabel(size)}: ${rps.map((x) => fmt(x)).join(' / ')}`).join('; ') +
        ' req/s.',
    );
    lines.push('');
  }
  lines.push(
    `**Start to ready**: ${fmt(results.startup.freshMs)} ms on a fresh database (migrations applied during start)` +
      (results.startup.restartMs === null
        ? '.'
        : `; ${fmt(results.startup.restartMs)} ms restarting with ${fmt(results.startup.restartOrganizations)} seeded organizations.`),
  );
  lines.push('');
  lines.push(
    '| scenario | orgs seeded | req/s | × baseline | p50 ms | p99 ms | max ms | non-2xx | RSS max MB (all runs) | CPU µs/req Atrium / PostgreSQL / load | note |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of results.runs) {
    if (!r.available) {
      lines.push(`| ${r.title} | ${fmt(r.size)} | — | — | — | — | — | — | — | — | not available: ${r.reason ?? ''} |`);
      continue;
    }
    const cpu = r.cpuUsPerRequest
      ? `${fmt(r.cpuUsPerRequest.server)} / ${fmt(r.cpuUsPerRequest.postgres)} / ${fmt(r.cpuUsPerRequest.load ?? undefined)}`
      : '—';
    lines.push(
      `| ${r.title} | ${fmt(r.size)} | ${fmt(r.rps)} | ${fmt(r.fractionOfBaseline, 3)} | ${fmt(r.latency?.p50)} | ` +
        `${fmt(r.latency?.p99)} | ${fmt(r.latency?.max)} | ${fmt(r.non2xx)} | ${fmt(rssPeakOf(r), 1)} | ${cpu} | ${noteOf(r)} |`,
    );
  }
  lines.push('');
  lines.push(...companionLines(results));
  lines.push(...scimLines(results));
  lines.push('## Targets');
  lines.push('');
  lines.push('| target | wanted | measured | met |');
  lines.push('|---|---|---|---|');
  for (const t of evaluateTargets(results)) {
    lines.push(
      `| ${t.name} | ${t.target} | ${t.measured} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} |`,
    );
  }
  lines.push('');
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- SVG chart

const COLORS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];

const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Panel {
  title: string;
  unit: string;
  value: (r: ScenarioRun) => number | undefined;
  reference?: { label: string; value: number } | undefined;
}

/** Two log-log panels, throughput and p99 against table size, one line per scenario. */
export function renderSvg(results: BenchResults): string {
  const scenarios = [...new Set(results.runs.filter((r) => r.available).map((r) => r.scenario))];
  const sizes = [...results.settings.sizes].sort((a, b) => a - b);
  const panels: Panel[] = [
    {
      title: 'Throughput (req/s, log scale)',
      unit: 'req/s',
      value: (r) => r.rps,
      reference: results.baseline ? { label: 'node:http baseline', value: results.baseline.rps } : undefined,
    },
    { title: 'p99 latency (ms, log scale)', unit: 'ms', value: (r) => r.latency?.p99 },
  ];
  const panelW = 460;
  const panelH = 300;
  const margin = { left: 60, right: 20, top: 40, bottom: 40 };
  const legendH = 20 * Math.ceil(scenarios.length / 2) + 20;
  const width = panels.length * (panelW + margin.left + margin.right);
  const height = panelH + margin.top + margin.bottom + legendH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="100%" height="100%" fill="white"/>`);

  panels.forEach((panel, pi) => {
    const x0 = pi * (panelW + margin.left + margin.right) + margin.left;
    const y0 = margin.top;
    const values = results.runs
      .filter((r) => r.available)
      .map(panel.value)
      .filter((v): v is number => v !== undefined && v > 0);
    if (panel.reference) values.push(panel.reference.value);
    if (values.length === 0) return;
    const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
    const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)));
    const xs = (size: number) => {
      const i = sizes.indexOf(size);
      const pad = 40;
      return x0 + (sizes.length === 1 ? panelW / 2 : pad + (i / (sizes.length - 1)) * (panelW - 2 * pad));
    };
    const ys = (v: number) =>
      y0 + panelH - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * panelH;
    out.push(
      `<text x="${x0 + panelW / 2}" y="${y0 - 16}" text-anchor="middle" font-size="13">${esc(panel.title)}</text>`,
    );
    out.push(`<rect x="${x0}" y="${y0}" width="${panelW}" height="${panelH}" fill="none" stroke="#999"/>`);
    for (let d = lo; d <= hi; d *= 10) {
      const y = ys(d);
      out.push(`<line x1="${x0}" x2="${x0 + panelW}" y1="${y}" y2="${y}" stroke="#eee"/>`);
      out.push(`<text x="${x0 - 6}" y="${y + 4}" text-anchor="end">${fmt(d)}</text>`);
    }
    for (const size of sizes) {
      out.push(`<text x="${xs(size)}" y="${y0 + panelH + 16}" text-anchor="middle">${sizeLabel(size)} orgs</text>`);
    }
    if (panel.reference) {
      const y = ys(panel.reference.value);
      out.push(`<line x1="${x0}" x2="${x0 + panelW}" y1="${y}" y2="${y}" stroke="#000" stroke-dasharray="6 4"/>`);
      out.push(`<text x="${x0 + 4}" y="${y - 4}">${esc(panel.reference.label)} ${fmt(panel.reference.value)}</text>`);
    }
    scenarios.forEach((scenario, si) => {
      const color = COLORS[si % COLORS.length];
      const points = sizes
        .map((size) => {
          const run = results.runs.find((r) => r.scenario === scenario && r.size === size && r.available);
          const v = run ? panel.value(run) : undefined;
          return v !== undefined && v > 0 ? [xs(size), ys(v)] : undefined;
        })
        .filter((p): p is number[] => p !== undefined);
      if (points.length > 1) {
        out.push(
          `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map((p) => p.join(',')).join(' ')}"/>`,
        );
      }
      for (const [x, y] of points) out.push(`<circle cx="${x}" cy="${y}" r="3" fill="${color}"/>`);
    });
  });

  const legendY = margin.top + panelH + margin.bottom + 10;
  scenarios.forEach((scenario, si) => {
    const title = results.runs.find((r) => r.scenario === scenario)?.title ?? scenario;
    const x = margin.left + (si % 2) * (width / 2);
    const y = legendY + Math.floor(si / 2) * 20;
    out.push(`<rect x="${x}" y="${y - 9}" width="12" height="12" fill="${COLORS[si % COLORS.length]}"/>`);
    out.push(`<text x="${x + 18}" y="${y + 1}">${esc(title)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
