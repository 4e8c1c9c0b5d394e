/* global performance */
/**
 * Object store throughput through the adapter the services use (MinioObjectStore). Run after `npm run build`:
 *
 *   node bench/object-store.bench.js --endpoint http://127.0.0.1:29000 --access-key K --secret-key S
 *                                    [--files 4] [--mib 64] [--ranges 200] [--range-kib 1024] [--rounds 3]
 *
 * The same files (random bytes, made once per run from --seed) are uploaded as streams of unknown size (multipart,
 * 5 MiB parts, as uploads through the gateway are), then read back as --ranges random ranged GETs of --range-kib
 * each (as the results and inference services read). Each round uses a fresh bucket, removed afterwards.
 * Prints MiB/s of upload and of ranged reads, and ranged-read p50/p99 latency, for each round and the median.
 */
'use strict';
const { randomUUID, createHash } = require('node:crypto');
const { Readable } = require('node:stream');
const { MinioObjectStore } = require('../packages/shared/dist');
const { parseArgs } = require('./lib/args');

const args = parseArgs(process.argv.slice(2));
const num = (name, dflt) => (args[name] === undefined ? dflt : Number(args[name]));
const files = num('files', 4);
const mib = num('mib', 64);
const ranges = num('ranges', 200);
const rangeBytes = num('range-kib', 1024) * 1024;
const rounds = num('rounds', 3);
const seed = args.seed ?? 'object-store-bench';
if (!args.endpoint || !args['access-key'] || !args['secret-key'])
  throw new Error('--endpoint, --access-key and --secret-key are required');

/** Deterministic pseudo-random bytes (SHA-256 in counter mode), so that every server gets the same files. */
function fileBytes(index) {
  const out = Buffer.alloc(mib * 1024 * 1024);
  for (let off = 0, n = 0; off < out.length; off += 32, n++)
    createHash('sha256').update(`${seed}/${index}/${n}`).digest().copy(out, off);
  return out;
}

function chunks(buf, size = 64 * 1024) {
  return Readable.from(
    (function* () {
      for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
    })(),
  );
}

async function drain(r) {
  let n = 0;
  for await (const c of r) n += c.length;
  return n;
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function round(data) {
  const store = new MinioObjectStore({
    endpoint: args.endpoint,
    accessKey: args['access-key'],
    secretKey: args['secret-key'],
    bucket: `bench-${randomUUID().slice(0, 8)}`,
    region: 'us-east-1',
  });
  await store.check();
  try {
    let t = performance.now();
    for (let i = 0; i < data.length; i++) await store.put(`videos/f${i}.bin`, chunks(data[i]));
    const uploadMiBs = (data.length * mib) / ((performance.now() - t) / 1000);
    const lat = [];
    let bytes = 0;
    let x = 12345;
    t = performance.now();
    for (let i = 0; i < ranges; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const f = x % data.length;
      const start = x % (data[f].length - rangeBytes);
      const t0 = performance.now();
      bytes += await drain(await store.get(`videos/f${f}.bin`, { start, end: start + rangeBytes - 1 }));
      lat.push(performance.now() - t0);
    }
    const readMiBs = bytes / 1024 / 1024 / ((performance.now() - t) / 1000);
    lat.sort((a, b) => a - b);
    return { uploadMiBs, readMiBs, p50: pct(lat, 50), p99: pct(lat, 99) };
  } finally {
    await store.delete(data.map((_, i) => `videos/f${i}.bin`));
    await store.client.removeBucket(store.bucket).catch(() => undefined);
  }
}

async function main() {
  const data = Array.from({ length: files }, (_, i) => fileBytes(i));
  const results = [];
  for (let r = 0; r < rounds; r++) {
    const res = await round(data);
    results.push(res);
    console.log(
      `round ${r + 1}: upload ${res.uploadMiBs.toFixed(1)} MiB/s, ranged reads ${res.readMiBs.toFixed(1)} MiB/s ` +
        `(p50 ${res.p50.toFixed(1)} ms, p99 ${res.p99.toFixed(1)} ms)`,
    );
  }
  const m = (k) => median(results.map((r) => r[k]));
  console.log(
    `median of ${rounds}: upload ${m('uploadMiBs').toFixed(1)} MiB/s, ranged reads ${m('readMiBs').toFixed(1)} MiB/s ` +
      `(p50 ${m('p50').toFixed(1)} ms, p99 ${m('p99').toFixed(1)} ms); ${files} x ${mib} MiB files, ` +
      `${ranges} ranges of ${rangeBytes / 1024} KiB`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
