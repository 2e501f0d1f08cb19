/**
 * Reads an allocation sampling profile (bench/alloc-sampling.cjs): the bytes allocated by each
 * function itself, and under each function (inclusive, once per stack).
 *   npx tsx bench/alloc-summary.ts bench/results/tmp/alloc-<pid>.heapprofile [top]
 */
import { readFileSync } from 'node:fs';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: alloc-summary.ts <file.heapprofile> [top]');
const top = Number(process.argv[3] ?? 40);
const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: SamplingNode };

const nameOf = ({ functionName, url, lineNumber }: SamplingNode['callFrame']) =>
  `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/server\/dist\//, '')}:${lineNumber + 1}`;

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
const walk = (node: SamplingNode, above: Set<string>) => {
  const name = nameOf(node.callFrame);
  total += node.selfSize;
  self.set(name, (self.get(name) ?? 0) + node.selfSize);
  const stack = new Set(above).add(name);
  for (const frame of stack) inclusive.set(frame, (inclusive.get(frame) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child, stack);
};
walk(head, new Set());

const print = (title: string, sizes: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, bytes] of [...sizes].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
};
console.log(`sampled ${(total / 1e6).toFixed(1)} MB`);
print('allocated by the function itself', self);
print('allocated under the function (inclusive)', inclusive);
