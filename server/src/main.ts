import cluster from 'node:cluster';
import { banner } from './banner.ts';
import { runPrimary } from './cluster.ts';
import { loadConfigOrExit } from './config.ts';
import { createLogger, exitOnStartFailure, startRuntime } from './runtime.ts';

// Every variable is checked before anything is opened or written (exit 2 naming each bad one).
const config = loadConfigOrExit({ needsMasterKey: true });
const log = createLogger(config.logLevel, undefined, config.logFormat);

if (config.processes > 1 && cluster.isPrimary) {
  // ATRIUM_PROCESSES=N: this process prepares the database once and supervises N API processes.
  await runPrimary(config, log);
} else {
  // Under node:cluster the primary sets the database up and makes the first-run secrets.
  const runtime = await startRuntime(config, log, { setUp: !cluster.isWorker }).catch((error: unknown) =>
    exitOnStartFailure(log, error),
  );
  // The stop handlers go in before anyone hears that the server listens: stdout to a pipe is
  // written synchronously, so a supervisor may send SIGTERM before the next line runs.
  let closing = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      log.info({ signal }, 'shutting down');
      const force = setTimeout(() => process.exit(1), config.shutdownDrainMs + 5_000);
      force.unref();
      runtime.close().then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  // Under node:cluster the primary prints the banner once every API process listens.
  if (cluster.isWorker) process.send?.({ atrium: 'listening', url: runtime.url });
  else process.stdout.write(banner(config, runtime.url, runtime.firstRun));
}
