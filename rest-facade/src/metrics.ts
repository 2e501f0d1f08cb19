import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** What the replica gauges read (the `ReadReplica` status of @atrium/db). */
export interface ReplicaMetrics {
  state: string;
  lagSeconds: number | null;
  lagBytes: number | null;
  reads: { replica: number; primary: number; readYourWrites: number; fallbacks: number };
}

/**
 * The service's Prometheus metrics, one registry per app. Workers add their queue depths with
 * `registerQueue` and count webhook failures on `webhookFailures`; the database gauges are
 * read at scrape time.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly webhookFailures: Counter<'reason'>;
  readonly databaseUnavailable: Counter;
  readonly shed: Counter<'reason'>;
  readonly connectionsRefused: Counter;
  private readonly queues = new Map<string, () => Promise<number> | number>();
  /** The request metrics' labelled children by `method route status` (`observe`). */
  private readonly children = new Map<
    string,
    { requests: { inc(value?: number): void }; duration: { observe(value: number): void } }
  >();

  constructor(options: { defaultMetrics?: boolean; dbPoolSize?: number; dbUp?: () => Promise<boolean> } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'atrium_' });
    this.httpRequests = new Counter({
      name: 'atrium_http_requests_total',
      help: 'HTTP requests by route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'atrium_http_request_duration_seconds',
      help: 'HTTP request latency by route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.webhookFailures = new Counter({
      name: 'atrium_webhook_delivery_failures_total',
      help: 'Failed webhook delivery attempts.',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.databaseUnavailable = new Counter({
      name: 'atrium_database_unavailable_total',
      help: 'Requests answered 503 because the database was unreachable.',
      registers: [this.registry],
    });
    this.shed = new Counter({
      name: 'atrium_http_shed_total',
      help: 'Requests answered 503 because the server was at capacity (see MAX_IN_FLIGHT): the queue was full, the request waited past QUEUE_TIMEOUT_MS, or the bodies held in memory reached their budget (body_budget).',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.connectionsRefused = new Counter({
      name: 'atrium_http_connections_refused_total',
      help: 'Connections closed as they arrived because their client address had ATRIUM_MAX_CONNECTIONS_PER_ADDRESS open already.',
      registers: [this.registry],
    });
    this.registerGauges(options);
  }

  /** Gauges read at scrape time: the pool size, whether the database answers, the workers' queues. */
  private registerGauges(options: { dbPoolSize?: number; dbUp?: () => Promise<boolean> }): void {
    new Gauge({
      name: 'atrium_db_pool_max_connections',
      help: 'Configured size of the database connection pool (1 for embedded PGlite).',
      registers: [this.registry],
      collect() {
        this.set(options.dbPoolSize ?? 1);
      },
    });
    const dbUp = options.dbUp;
    new Gauge({
      name: 'atrium_db_up',
      help: '1 when the database answered a trivial query at scrape time.',
      registers: [this.registry],
      async collect() {
        this.set(dbUp ? ((await dbUp()) ? 1 : 0) : 1);
      },
    });
    const queues = this.queues;
    new Gauge({
      name: 'atrium_worker_queue_depth',
      help: 'Items waiting for a background worker.',
      labelNames: ['worker'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [name, depth] of queues) {
          try {
            this.set({ worker: name }, await depth());
          } catch {
            // A queue that cannot be read (database down) is left out of this scrape.
          }
        }
      },
    });
  }

  /** Publishes a worker's queue depth as `atrium_worker_queue_depth{worker=name}`. */
  registerQueue(name: string, depth: () => Promise<number> | number): void {
    this.queues.set(name, depth);
  }

  /**
   * Publishes a read replica's state at scrape time: `atrium_replica_up` (1 when reads may go
   * to it), `atrium_replica_lag_seconds` and `atrium_replica_lag_bytes` (NaN while it cannot
   * be reached), and `atrium_replica_reads_total{served_by}` (replica, primary,
   * read_your_writes, fallback).
   */
  registerReplica(status: () => ReplicaMetrics): void {
    new Gauge({
      name: 'atrium_replica_up',
      help: '1 when the read replica answers and lags less than DATABASE_REPLICA_MAX_LAG_MS; 0 when reads go to the primary.',
      registers: [this.registry],
      collect() {
        this.set(status().state === 'up' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'atrium_replica_lag_seconds',
      help: 'Age of the oldest WAL position of the primary the replica has not replayed (0 when caught up).',
      registers: [this.registry],
      collect() {
        this.set(status().lagSeconds ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'atrium_replica_lag_bytes',
      help: 'Bytes of WAL written on the primary and not yet replayed on the replica.',
      registers: [this.registry],
      collect() {
        this.set(status().lagBytes ?? Number.NaN);
      },
    });
    new Counter({
      name: 'atrium_replica_reads_total',
      help: 'API reads by where they were served: the replica, the primary (replica down or lagging), the primary for read-your-writes, or the primary after a failed replica read.',
      labelNames: ['served_by'],
      registers: [this.registry],
      collect() {
        const { reads } = status();
        this.reset();
        this.inc({ served_by: 'replica' }, reads.replica);
        this.inc({ served_by: 'primary' }, reads.primary);
        this.inc({ served_by: 'read_your_writes' }, reads.readYourWrites);
        this.inc({ served_by: 'fallback' }, reads.fallbacks);
      },
    });
  }

  /** Publishes `atrium_invalidation_listening`: 1 while this process hears cache invalidations (LISTEN). */
  registerListening(listening: () => boolean): void {
    new Gauge({
      name: 'atrium_invalidation_listening',
      help: '1 while this process hears cache invalidations (LISTEN/NOTIFY); 0 while caches fall back to their time bounds.',
      registers: [this.registry],
      collect() {
        this.set(listening() ? 1 : 0);
      },
    });
  }

  /** Publishes the in-flight limit's load as `atrium_http_in_flight` and `atrium_http_queued`. */
  registerInFlight(load: () => { running: number; waiting: number }): void {
    new Gauge({
      name: 'atrium_http_in_flight',
      help: 'API requests running their procedures now (at most MAX_IN_FLIGHT).',
      registers: [this.registry],
      collect() {
        this.set(load().running);
      },
    });
    new Gauge({
      name: 'atrium_http_queued',
      help: 'API requests waiting for a turn to run.',
      registers: [this.registry],
      collect() {
        this.set(load().waiting);
      },
    });
  }

  /**
   * Counts a finished request; `shed` marks a 503 from the in-flight limit, not the database.
   * The labelled children of each (method, route, status) are made once and kept (`children`),
   * not labelled again on every request: a route is a template or a named path, so there are as
   * many as the metrics have series anyway.
   */
  observe(method: string, route: string, status: number, seconds: number, shed = false): void {
    const key = `${method} ${route} ${status}`;
    let child = this.children.get(key);
    if (!child) {
      const labels = { method, route, status: String(status) };
      child = { requests: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.children.set(key, child);
    }
    child.requests.inc();
    child.duration.observe(seconds);
    if (status === 503 && !shed) this.databaseUnavailable.inc();
  }
}
