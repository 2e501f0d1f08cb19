#!/usr/bin/env node
// Reproduces the growth of postgres.js's pool queue (patches/README.md, "postgres.js: the pool's
// busy queue never drains"). Needs only `postgres` and a PostgreSQL server:
//
//   npm i postgres@3.4.9 && node postgres-queue.mjs postgres://postgres@127.0.0.1:5432/postgres [queries]
//
// 32 callers share a pool of `max: 2` connections and run `select 1` until QUERIES have been
// answered. The script reports, per slice of queries, the time taken and the most slots one
// `indexOf` call had to search (the pool's `Queue.remove` is where long ones come from):
// unpatched, both grow with every query; patched, both stay flat.
import postgres from 'postgres';

const url = process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const QUERIES = Number(process.argv[3] ?? 200_000);
const SLICE = QUERIES / 10;
const CALLERS = 32;

// What the queue's `remove` searches: the most slots one indexOf call had to look at.
let longest = 0;
const indexOf = Array.prototype.indexOf;
Array.prototype.indexOf = function (item, from = 0) {
  if (this.length - from > longest) longest = this.length - from;
  return indexOf.call(this, item, from);
};

const sql = postgres(url, { max: 2, prepare: true });
await sql`select 1`;
let answered = 0;
let sliceStarted = performance.now();
const started = sliceStarted;

async function caller() {
  while (answered < QUERIES) {
    await sql`select 1`;
    answered += 1;
    if (answered % SLICE === 0) {
      const ms = performance.now() - sliceStarted;
      console.log(
        `${String(answered).padStart(8)} queries: ${ms.toFixed(0).padStart(6)} ms for the last ${SLICE}, most slots searched ${longest}`,
      );
      sliceStarted = performance.now();
      longest = 0;
    }
  }
}

await Promise.all(Array.from({ length: CALLERS }, caller));
console.log(`${QUERIES} queries in ${((performance.now() - started) / 1000).toFixed(1)} s`);
await sql.end();
