import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** The sender's port (which process sent it, tests/src/scale). */
  remotePort: number | undefined;
}

/** What the receiver does with the n-th request (0-based): answer a status, or never answer. */
export type Behaviour = (n: number) => number | 'hang';

/** A real HTTP webhook receiver on loopback that records every request with its raw body. */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly hanging: ServerResponse[] = [];
  private server: Server | undefined;
  url = '';

  constructor(private readonly behaviour: Behaviour = () => 200) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const n = this.requests.length;
        this.requests.push({
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          remotePort: req.socket.remotePort,
        });
        const answer = this.behaviour(n);
        if (answer === 'hang') {
          this.hanging.push(res);
          return;
        }
        res.statusCode = answer;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  /** Waits (bounded) until `count` requests have arrived. */
  async waitFor(count: number, timeoutMs = 3_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${this.requests.length}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
