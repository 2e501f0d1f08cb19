/**
 * The baseline: a bare node:http server answering a fixed 300-byte JSON body, so every Atrium
 * figure can also be read as a fraction of what Node can do at all on this machine.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const filler = 'x'.repeat(300);
const base = { object: 'organization', id: 'org_01HE8GSH8FQPASKSY27THRKRBP', name: 'Baseline', pad: '' };
const bodyText = JSON.stringify({ ...base, pad: filler.slice(0, 300 - JSON.stringify(base).length) });
const body = Buffer.from(bodyText);
if (body.length !== 300) throw new Error(`baseline body is ${body.length} bytes, not 300`);

const server = createServer({ keepAliveTimeout: 65_000 }, (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening ${port}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
