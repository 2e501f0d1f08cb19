import { createHmac } from 'node:crypto';
import {
  type AttemptOutcome,
  type Deps,
  type DueDelivery,
  fanOutEvents,
  openWebhookSecret,
  purgeExpiredEvents,
  recordDeliveryAttempt,
  releaseDeliveries,
  takeDueDeliveries,
} from '@atrium/routers';
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery.ts';
import { sendGuarded } from './guarded-http.ts';

export interface WebhookWorkerOptions extends DeliveryWorkerOptions {
  /** Attempts in flight at once per endpoint, so one slow endpoint cannot take every slot. */
  perEndpoint?: number;
  /** Events expanded into deliveries per fan-out step (a quarter of them at most from one environment). */
  fanoutBatch?: number;
  /** How often expired events are purged. */
  purgeEveryMs?: number;
}

/** `WorkOS-Signature: t=<unix ms>, v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, upstream's scheme. */
export function signatureHeader(secret: string, body: string, timestampMs: number): string {
  const digest = createHmac('sha256', secret).update(`${timestampMs}.${body}`).digest('hex');
  return `t=${timestampMs}, v1=${digest}`;
}

/** Posts one signed body through the guarded client; resolves with the outcome, never rejects. */
export function postSigned(
  url: string,
  secret: string,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean; nowMs: number },
): Promise<AttemptOutcome> {
  return sendGuarded(
    {
      method: 'POST',
      url,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Atrium-Webhooks/1',
        'WorkOS-Signature': signatureHeader(secret, body, options.nowMs),
      },
      body,
    },
    options,
  );
}

/** Gives back one of `key`'s slots. */
function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}

/**
 * The webhook worker. Each tick expands recorded events into deliveries (`fanOutEvents`, so a
 * write never pays for its endpoints), then, when there may be some (`claimsNow`), takes due
 * deliveries round-robin by environment (leased with SKIP LOCKED), posts each one signed, with a
 * timeout, independently of the others (a slow endpoint holds only its own slots, a slow
 * environment at most `perEnvironment`), and records every attempt; failures retry with
 * exponential backoff and jitter until `maxAgeMs` after the event. Also purges events past their
 * retention.
 */
export class WebhookWorker extends DeliveryWorker {
  private readonly perEndpoint: number;
  private readonly fanoutBatch: number;
  private readonly purgeEveryMs: number;
  private lastPurge = 0;
  private readonly perEndpointCount = new Map<string, number>();
  private readonly perEnvironmentCount = new Map<string, number>();
  /** Where the last full round of each claim ended: the next one starts after it. */
  private fanoutCursor = '';
  private deliveryCursor = '';
  /** What the last fan-out step did: events expanded (more may be waiting) and deliveries queued. */
  private lastFanout = { events: 0, deliveries: 0 };
  /** When the last delivery claim ran (performance.now()) and how many deliveries it took. */
  private lastClaim = { at: Number.NEGATIVE_INFINITY, took: 0 };

  constructor(deps: Deps, options: WebhookWorkerOptions = {}) {
    super(deps, options, 16, 'webhook delivery');
    this.perEndpoint = options.perEndpoint ?? 2;
    this.fanoutBatch = Math.max(1, options.fanoutBatch ?? 100);
    this.purgeEveryMs = options.purgeEveryMs ?? 60 * 60 * 1000;
  }

  /** Ticks again at once also while the fan-out has a backlog. */
  protected override again(started: number): boolean {
    return super.again(started) || this.lastFanout.events > 0;
  }

  /**
   * Whether this tick claims due deliveries. A fan-out step that expanded events into no delivery
   * (a SCIM sync where no endpoint listens) made nothing new to take, so while its backlog lasts
   * the claim runs only as an idle worker's would, once per interval, unless the last claim took
   * something. Deliveries it queued are claimed at once; others wait at most one interval.
   */
  private claimsNow(): boolean {
    const { events, deliveries } = this.lastFanout;
    if (events === 0 || deliveries > 0 || this.lastClaim.took > 0) return true;
    return performance.now() - this.lastClaim.at >= this.intervalMs;
  }

  /**
   * One fan-out step: expands up to `fanoutBatch` recorded events into their deliveries,
   * round-robin by environment. Returns how many events it expanded.
   */
  async fanOut(): Promise<number> {
    const step = await fanOutEvents(this.deps.db, this.now(), this.fanoutBatch, {
      perEnvironment: Math.max(1, Math.ceil(this.fanoutBatch / 4)),
      cursor: this.fanoutCursor,
      environments: this.environments,
    });
    this.fanoutCursor = step.cursor;
    // Anything expanded: step again at once (a per-environment share, not a full step, may
    // be all one busy environment gets per step).
    this.lastFanout = { events: step.events, deliveries: step.deliveries };
    return step.events;
  }

  /**
   * Expands recorded events (one fan-out step), then takes what is due and starts each attempt;
   * returns how many were started. Attempts run in the background: `drain()` waits for them.
   */
  async tick(): Promise<number> {
    const now = this.now();
    if (now.getTime() - this.lastPurge >= this.purgeEveryMs) {
      this.lastPurge = now.getTime();
      const purged = await purgeExpiredEvents(this.deps.db, now);
      if (purged > 0) this.deps.log.info({ purged }, 'expired events purged');
    }
    await this.fanOut();
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0 || !this.claimsNow()) return 0;
    const atCap = (counts: Map<string, number>, cap: number) =>
      [...counts].filter(([, n]) => n >= cap).map(([id]) => id);
    const leaseMs = this.timeoutMs + this.leaseGraceMs;
    const taken = await takeDueDeliveries(
      this.deps.db,
      now,
      free,
      leaseMs,
      { perEnvironment: this.perEnvironment, cursor: this.deliveryCursor, environments: this.environments },
      {
        endpoints: atCap(this.perEndpointCount, this.perEndpoint),
        environments: atCap(this.perEnvironmentCount, this.perEnvironment),
      },
    );
    this.deliveryCursor = taken.cursor;
    this.lastClaim = { at: performance.now(), took: taken.deliveries.length };
    let started = 0;
    const skipped: string[] = [];
    for (const delivery of taken.deliveries) {
      const count = this.perEndpointCount.get(delivery.endpointId) ?? 0;
      const envCount = this.perEnvironmentCount.get(delivery.environmentId) ?? 0;
      // Over this endpoint's or environment's share: give it back for a later tick.
      if (count >= this.perEndpoint || envCount >= this.perEnvironment) {
        skipped.push(delivery.id);
        continue;
      }
      this.perEndpointCount.set(delivery.endpointId, count + 1);
      this.perEnvironmentCount.set(delivery.environmentId, envCount + 1);
      this.track(delivery.id, this.attempt(delivery), () => {
        release(this.perEndpointCount, delivery.endpointId);
        release(this.perEnvironmentCount, delivery.environmentId);
      });
      started += 1;
    }
    await releaseDeliveries(this.deps.db, skipped, now);
    return started;
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    try {
      const attemptedAt = this.now();
      const secret = openWebhookSecret(this.deps.tokens.masterKey, delivery.endpointId, delivery.secret);
      const outcome = await postSigned(delivery.url, secret, delivery.body, {
        timeoutMs: this.timeoutMs,
        allowPrivate: this.allowPrivate,
        nowMs: Date.now(),
      });
      const retryAt = new Date(this.now().getTime() + this.retryDelayMs(delivery.attempts + 1));
      const giveUp = retryAt.getTime() > delivery.createdAt.getTime() + this.maxAgeMs;
      const status = await recordDeliveryAttempt(
        this.deps.db,
        delivery,
        outcome,
        attemptedAt,
        outcome.ok || giveUp ? null : retryAt,
      );
      this.deps.log.info(
        {
          deliveryId: delivery.id,
          endpointId: delivery.endpointId,
          statusCode: outcome.statusCode,
          error: outcome.error,
          status,
        },
        'webhook attempt',
      );
    } catch (error) {
      this.deps.log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt could not be recorded');
    }
  }
}
