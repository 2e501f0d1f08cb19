/**
 * The shape of one bench run's results (bench/results/<date>.json): written by bench/run.ts,
 * read by bench/report.ts. Its own module so that neither of those imports the other.
 */
import type { LoadResult } from './load.ts';
import type { ReaderResult, SyncResult } from './scim-load.ts';

export interface ScenarioRun {
  size: number;
  organizations: number;
  scenario: string;
  title: string;
  available: boolean;
  reason?: string;
  note?: string;
  rps?: number;
  latency?: LoadResult['latency'];
  requests?: number;
  non2xx?: number;
  errors?: number;
  statusCodes?: Record<string, number>;
  rssMaxMb?: number | null;
  serverCpuAvg?: number | null;
  /** CPU microseconds per request over the measured run: Atrium, PostgreSQL, load generator. */
  cpuUsPerRequest?: { server: number; postgres: number; load: number | null } | null;
  /**
   * A floor's or the peer's run (bench/companions.ts), measured right after Atrium's scenario `of`
   * in the same round; the report reads Atrium / it. `sameAnswer`: the floor answered Atrium's JSON.
   */
  companion?: { kind: 'floor' | 'peer'; name: string; of: string; target?: number; sameAnswer?: boolean | null };
  /** Throughput over the baseline measured just before this run's round (see `speedChecks`). */
  fractionOfBaseline?: number;
  /** With `--repeat n`: every run of the scenario at this size, in the order they ran. */
  repeats?: {
    rps: number;
    p99: number;
    cpuUsPerRequest: ScenarioRun['cpuUsPerRequest'];
    /** Each run's own RSS peak: the RSS target is held to the highest, not the median run's. */
    rssMaxMb?: number | null;
    fractionOfBaseline?: number;
  }[];
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  commit: string;
  command: string;
  machine: { node: string; cpus: number; cpuModel: string; memoryGb: number; postgres: string };
  settings: {
    server: string;
    connections: number;
    durationSeconds: number;
    warmupSeconds: number;
    /** How many times each scenario ran per size, interleaved (absent in older results: 1). */
    repeat?: number;
    sizes: number[];
    synchronousCommit: string;
    fsync: string;
  };
  startup: { freshMs: number; restartMs: number | null; restartOrganizations: number | null };
  baseline: (LoadResult & { rssMaxMb: number | null }) | null;
  /**
   * The baseline again before every round of every size (the first is `baseline`): this VM's
   * speed swings 2× within a run, and these show when. A rough gauge of a scenario's speed, whose
   * three processes share the cores differently (absent in older results).
   */
  speedChecks?: { size: number; round: number; rps: number; p99: number }[];
  runs: ScenarioRun[];
  /**
   * `--statistics-check`: 20,000 creates through the API into an environment of their own, then
   * its domains filter against its first page with no ANALYZE but Atrium's own (issue #35).
   */
  statisticsCheck?: {
    creates: number;
    createSeconds: number;
    /** Seconds from the last create until Atrium had analyzed `organizations` (null: not within the wait). */
    analyzedAfterSeconds: number | null;
    firstPage: ScenarioRun;
    filter: ScenarioRun;
  };
  /** The directory sync scenarios (`scim_*`), when they ran. */
  scim?: ScimResults;
}

/** The SCIM scenarios (bench/scim.ts, issue #36), run once after the organization sizes. */
export interface ScimResults {
  /** Why the SCIM scenarios could not run (no SCIM surface on this branch), if they could not. */
  reason?: string;
  initialSync?: {
    users: number;
    groups: number;
    concurrency: number;
    result: SyncResult;
    /** What the database holds afterwards: every POST and membership kept. */
    stored: {
      directoryUsers: number;
      groups: number;
      memberships: number;
      provisionedUsers: number;
      managedMemberships: number;
    };
    /** The other tenant's reads, alone and during the sync. */
    reader: { alone: ReaderResult; during: ReaderResult };
    cpuSeconds: { server: number; postgres: number; load: number | null } | null;
    /** Atrium's and PostgreSQL's CPU over the users phase alone (the floor's is over its users phase). */
    usersCpuSeconds?: { server: number; postgres: number };
    /**
     * The SCIM create floor (bench/floors/scim.ts) right after: the same users phase against a fresh
     * directory; `ratio` is Atrium users/s ÷ the floor's, `sameShape` whether a probe's 201s match.
     */
    floor?: {
      result: SyncResult;
      cpuSeconds: { server: number; postgres: number; load: number | null } | null;
      ratio: number;
      sameShape: boolean | null;
      stored: { directoryUsers: number; provisionedUsers: number; managedMemberships: number; events: number };
      /** The same other tenant reading Atrium during the floor's sync: the machine's share, not Atrium's. */
      reader?: ReaderResult;
    };
  };
  groupPatch?: { members: number; ms: number[]; statuses: number[]; stored: number[]; failures: string[] };
  deepPage?: { users: number; seedSeconds: number; first: ScenarioRun; deep: ScenarioRun };
}
