import { Resolver } from 'node:dns/promises';
import {
  applyDnsResult,
  type Deps,
  type DnsCheckResult,
  type DueDomain,
  type Scope,
  scopeOf,
  takeDueDomains,
} from '@atrium/routers';
import { eachLimited, TickLoop } from './loop.ts';

/** What the worker needs from DNS: a name's TXT records (each as its chunks) and its NS host names. */
export interface DnsResolver {
  resolveTxt(name: string): Promise<string[][]>;
  resolveNs(name: string): Promise<string[]>;
}

export interface VerificationWorkerOptions {
  /** `host:port` DNS servers (`DNS_SERVERS`); empty = the system's resolvers. */
  servers?: string[];
  /** Per-lookup timeout. */
  timeoutMs?: number;
  /** Domains checked at once (a check is its TXT lookup and its name-server lookups, side by side). */
  concurrency?: number;
  /** Domains of one environment per tick (so at most this many of its checks in flight); half the concurrency. */
  perEnvironment?: number;
  /** Domains taken per tick. */
  batchSize?: number;
  /**
   * How long past the batch's longest lookups a taken domain stays leased (default 30 s): a worker
   * that dies mid-check holds it that long, then another takes it (DNS_LEASE_GRACE_MS).
   */
  leaseGraceMs?: number;
  /** How often the loop looks for due domains. */
  intervalMs?: number;
  /** First retry delay after a miss; doubles per attempt up to `backoffMaxMs`. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** The worker's clock (tests move it). */
  now?: () => Date;
  /** Replaces the node:dns resolver (tests may count lookups through a wrapper). */
  resolver?: DnsResolver;
  /** Only these environments' domains (tests; a deployment leaves it unset). */
  environmentId?: string | string[];
}

/** A node:dns resolver with its own servers, timeout and a single try per server. */
export function createDnsResolver(servers: string[], timeoutMs: number): DnsResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  if (servers.length > 0) resolver.setServers(servers);
  return resolver;
}

/** Whether a TXT value proves ownership: the exact token or `verification_token=<token>`. */
export function txtMatches(value: string, token: string): boolean {
  const v = value.trim();
  return v === token || v === `verification_token=${token}`;
}

/**
 * Looks up one domain's record, and at the same time the name servers of the zone it lies in;
 * the error text never contains the token or record values.
 */
export async function checkDomain(resolver: DnsResolver, due: DueDomain): Promise<DnsCheckResult> {
  const [txt, nameServers] = await Promise.all([checkTxt(resolver, due), nameServersOf(resolver, due.domain)]);
  return nameServers ? { ...txt, nameServers } : txt;
}

async function checkTxt(resolver: DnsResolver, due: DueDomain): Promise<DnsCheckResult> {
  const name = `${due.verificationPrefix}.${due.domain}`;
  try {
    const records = await resolver.resolveTxt(name);
    if (records.some((chunks) => txtMatches(chunks.join(''), due.verificationToken))) return { matched: true };
    return { matched: false, error: `TXT record at ${name} does not hold the verification token` };
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'EUNKNOWN';
    const reason: Record<string, string> = {
      ENODATA: 'no TXT record',
      ENOTFOUND: 'NXDOMAIN',
      ETIMEOUT: 'DNS timeout',
      ESERVFAIL: 'SERVFAIL',
      EREFUSED: 'REFUSED',
      ECONNREFUSED: 'DNS server refused the connection',
    };
    return { matched: false, error: `${reason[code] ?? code} at ${name}` };
  }
}

/** NS lookups per check at most: a domain's zone apex is rarely more than a few labels up. */
const NS_LOOKUPS = 4;

/**
 * The NS host names of the zone `domain` lies in (lower case, sorted): the domain's own, else its
 * parent's, and so on up to a name of two labels (never a TLD's), at most `NS_LOOKUPS` names.
 * Undefined when no lookup answered with some: the name servers are a hint for the widgets, so a
 * failure here never fails a check.
 */
export async function nameServersOf(resolver: DnsResolver, domain: string): Promise<string[] | undefined> {
  const labels = domain.split('.');
  for (let start = 0; labels.length - start >= 2 && start < NS_LOOKUPS; start++) {
    const name = labels.slice(start).join('.');
    let hosts: string[];
    try {
      hosts = await resolver.resolveNs(name);
    } catch (error) {
      // NOERROR without NS records: the name is inside a zone, whose apex is further up.
      if ((error as { code?: string }).code === 'ENODATA') continue;
      return undefined;
    }
    if (hosts.length > 0) return [...new Set(hosts.map((h) => h.toLowerCase().replace(/\.$/, '')))].sort();
  }
  return undefined;
}

/**
 * The DNS verification worker: takes due pending domains round-robin by environment, at most
 * `perEnvironment` of each per tick (leased with SKIP LOCKED, so several processes share the
 * work), looks up their TXT records with bounded concurrency, and applies each result through
 * the domain service's state machine. An environment whose DNS never answers thus holds at most
 * its share of the slots, and every other environment's checks run in the same tick.
 */
export class VerificationWorker {
  readonly resolver: DnsResolver;
  private readonly now: () => Date;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly perEnvironment: number;
  private readonly batchSize: number;
  private readonly leaseGraceMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly loop: TickLoop;
  private readonly environments: string[] | undefined;
  /** The environment the last full round ended on: the next one starts after it. */
  private cursor = '';
  /** Whether the last tick left due work behind (a full batch, or an environment at its share). */
  private backlog = false;

  constructor(
    private readonly deps: Deps,
    options: VerificationWorkerOptions = {},
  ) {
    this.now = options.now ?? deps.now;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.concurrency = options.concurrency ?? 8;
    this.perEnvironment = Math.max(1, options.perEnvironment ?? Math.floor(this.concurrency / 2));
    this.batchSize = options.batchSize ?? this.concurrency * 4;
    this.leaseGraceMs = options.leaseGraceMs ?? 30_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 15_000;
    this.backoffMaxMs = options.backoffMaxMs ?? 60 * 60 * 1000;
    this.environments =
      options.environmentId === undefined ? undefined : ([] as string[]).concat(options.environmentId);
    this.resolver = options.resolver ?? createDnsResolver(options.servers ?? [], this.timeoutMs);
    this.loop = new TickLoop(
      async () => (await this.tick()) > 0 && this.backlog,
      options.intervalMs ?? 1_000,
      (error) => deps.log.error({ err: error }, 'domain verification tick failed'),
    );
  }

  /** The delay before check number `attempts + 1` after a miss: doubling, capped (hourly by default). */
  retryDelayMs(attempts: number): number {
    return Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.min(attempts, 30));
  }

  /** One pass: take due domains, check them, apply results. Returns how many were taken. */
  async tick(): Promise<number> {
    // A lease covers the lookups of a whole batch, with room to spare.
    const leaseMs = this.timeoutMs * Math.ceil(this.batchSize / this.concurrency) * 2 + this.leaseGraceMs;
    const taken = await takeDueDomains(this.deps.db, this.now(), this.batchSize, leaseMs, {
      perEnvironment: this.perEnvironment,
      cursor: this.cursor,
      environments: this.environments,
    });
    const due = taken.domains;
    this.cursor = taken.cursor;
    const perEnvironment = new Map<string, number>();
    for (const d of due) perEnvironment.set(d.environmentId, (perEnvironment.get(d.environmentId) ?? 0) + 1);
    this.backlog = due.length >= this.batchSize || [...perEnvironment.values()].some((n) => n >= this.perEnvironment);
    const scopes = new Map<string, Promise<Scope>>();
    await eachLimited(due, this.concurrency, async (domain) => {
      try {
        const result = await checkDomain(this.resolver, domain);
        let scope = scopes.get(domain.environmentId);
        if (!scope) {
          scope = scopeOf(this.deps, domain.environmentId, this.now);
          scopes.set(domain.environmentId, scope);
        }
        const retryAt = new Date(this.now().getTime() + this.retryDelayMs(domain.checkAttempts));
        const state = await applyDnsResult(await scope, domain, result, retryAt);
        this.deps.log.info(
          { domainId: domain.id, domain: domain.domain, state, error: result.matched ? undefined : result.error },
          'domain checked',
        );
      } catch (error) {
        // The lease expires and another tick retries the domain.
        this.deps.log.error({ err: error, domainId: domain.id }, 'domain check failed');
      }
    });
    return due.length;
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
