import postgres from 'postgres';

/** What a listener tells its owner: each payload, and when it starts and stops hearing them. */
export interface ListenCallbacks {
  /** A notification's payload on the channel (in commit order of the notifying transactions). */
  message(payload: string): void;
  /**
   * The channel is listened to, after start or after a reconnect. Notifications sent while it
   * was not are lost, so the owner must forget whatever they would have told it.
   */
  up(): void;
  /** The listening connection dropped or stopped answering; a reconnect is under way. */
  down(error: unknown): void;
}

export interface Listener {
  /** Is the channel listened to now? */
  readonly listening: boolean;
  close(): Promise<void>;
}

/** A listener as a class: the house keeps getters off object literals (tests/src/patches/v8-promotion.test.ts). */
class ListenerHandle implements Listener {
  constructor(
    private readonly state: () => boolean,
    readonly close: () => Promise<void>,
  ) {}

  get listening(): boolean {
    return this.state();
  }
}

export interface PostgresListenOptions {
  connectTimeoutSeconds?: number;
  /** How often the listening connection is checked with `select 1` (default 2 s); a silent drop is found within about twice that. */
  heartbeatMs?: number;
  /** The longest wait between reconnect attempts (default 2 s; they start at 100 ms and double). */
  maxRetryMs?: number;
}

/**
 * `LISTEN channel` on one dedicated PostgreSQL connection of its own (not one of the pools'),
 * kept alive: a close (the server restarted, the network dropped) or a heartbeat that does not
 * answer in time marks it down, and it reconnects with backoff and listens again, calling `up`
 * once it does. postgres.js's own `sql.listen` re-listens once on a close and gives up silently
 * if that attempt fails (the database still down), which is why this loop is ours.
 */
export function listenPostgres(
  url: string,
  channel: string,
  callbacks: ListenCallbacks,
  options: PostgresListenOptions = {},
): Listener {
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const maxRetryMs = options.maxRetryMs ?? 2_000;
  let listening = false;
  let closed = false;
  let client: postgres.Sql | undefined;
  let retryMs = 100;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const drop = (error: unknown) => {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = undefined;
    const old = client;
    client = undefined;
    old?.end({ timeout: 0 }).catch(() => {});
    if (listening) {
      listening = false;
      callbacks.down(error);
    }
    if (!closed && !retryTimer) {
      retryTimer = setTimeout(connect, retryMs);
      retryTimer.unref();
      retryMs = Math.min(retryMs * 2, maxRetryMs);
    }
  };

  async function connect(): Promise<void> {
    retryTimer = undefined;
    if (closed) return;
    const own = postgres(url, {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      fetch_types: false,
      connect_timeout: options.connectTimeoutSeconds ?? 5,
      onnotice: () => {},
      connection: { application_name: 'atrium-listen' },
      onnotify: (name: string, payload: string) => {
        if (client === own && name === channel) callbacks.message(payload);
      },
      onclose: () => {
        if (client === own) drop(new Error('listen connection closed'));
      },
    } as postgres.Options<Record<string, never>>);
    client = own;
    try {
      await own.unsafe(`listen "${channel.replace(/"/g, '""')}"`);
    } catch (error) {
      if (client === own) drop(error);
      return;
    }
    if (client !== own || closed) return;
    retryMs = 100;
    listening = true;
    callbacks.up();
    heartbeat = setInterval(() => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('listen connection did not answer')), heartbeatMs);
      });
      Promise.race([own`select 1`, late])
        .catch((error: unknown) => {
          if (client === own) drop(error);
        })
        .finally(() => clearTimeout(timer));
    }, heartbeatMs);
    heartbeat.unref();
  }

  void connect();
  return new ListenerHandle(
    () => listening,
    async () => {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (heartbeat) clearInterval(heartbeat);
      listening = false;
      const old = client;
      client = undefined;
      await old?.end({ timeout: 1 });
    },
  );
}

/** The part of a PGlite client a listener uses (its own LISTEN/NOTIFY, within the one process). */
export interface PgliteListenable {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** PGlite's own LISTEN: one process owns the database, so it never drops. */
export async function listenPglite(
  client: PgliteListenable,
  channel: string,
  callbacks: ListenCallbacks,
): Promise<Listener> {
  const unlisten = await client.listen(channel, (payload) => callbacks.message(payload));
  callbacks.up();
  let listening = true;
  return new ListenerHandle(
    () => listening,
    async () => {
      listening = false;
      await unlisten();
    },
  );
}
