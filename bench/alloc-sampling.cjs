// Allocation sampling of a server under load, collected objects included (a V8 `--heap-prof`
// keeps only what is still live at exit, so it cannot say where garbage comes from):
//   NODE_OPTIONS="--require ./bench/alloc-sampling.cjs" ALLOC_START=9 ALLOC_STOP=24 \
//     npm run bench -- --scenarios widgets_members_list --skip-floors --skip-baseline --duration 25
// samples the Atrium process (the one running server/dist/*.mjs) from ALLOC_START to ALLOC_STOP
// seconds after it starts, writes bench/results/tmp/alloc-<pid>.heapprofile, and
// `npx tsx bench/alloc-summary.ts <file>` reads it. ALLOC_MATCH=<regex> samples the processes whose
// arguments match it instead (`floors/graphql\.ts$`: a floor, to compare bytes per request).
const { Session } = require('node:inspector');
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const start = Number(process.env.ALLOC_START ?? 10);
const stop = Number(process.env.ALLOC_STOP ?? 25);
const match = process.env.ALLOC_MATCH ? new RegExp(process.env.ALLOC_MATCH) : /server[\\/]dist[\\/][^\\/]+\.mjs$/;
const server = process.argv.some((arg) => match.test(arg));

if (server) {
  const session = new Session();
  session.connect();
  const fail = (step) => (error) => error && process.stderr.write(`alloc-sampling ${step}: ${error.message}\n`);
  setTimeout(() => {
    session.post('HeapProfiler.enable', fail('enable'));
    session.post(
      'HeapProfiler.startSampling',
      // ALLOC_PROMOTED=1 leaves out what scavenges collect: what is left was promoted (or is live at the end).
      {
        samplingInterval: 16_384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: process.env.ALLOC_PROMOTED !== '1',
      },
      fail('start'),
    );
    setTimeout(
      () => {
        session.post('HeapProfiler.stopSampling', (error, result) => {
          if (error) return fail('stop')(error);
          const dir = join(__dirname, 'results', 'tmp');
          mkdirSync(dir, { recursive: true });
          writeFileSync(join(dir, `alloc-${process.pid}.heapprofile`), JSON.stringify(result.profile));
        });
      },
      (stop - start) * 1000,
    ).unref();
  }, start * 1000).unref();
}
