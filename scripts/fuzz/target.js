#!/usr/bin/env node
// The instance schemathesis fuzzes: the standalone service (all six services in this process, ephemeral
// loopback ports, a fresh data directory), a loopback HTTP server for the clips that positive stream_url
// cases point at, and a loopback webhook receiver that positive registrations point at. Writes
// {"url", "media", "receiver"} to the file named by argv[2] once ready; stops on SIGTERM.
// Needs `npm run build` first.
'use strict';
const { mkdtempSync, rmSync, writeFileSync, createReadStream, statSync } = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const shared = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const { startStandalone } = require(path.join(root, 'apps/standalone/dist/index.js'));

async function main() {
  const out = process.argv[2];
  if (!out) throw new Error('usage: target.js READY_FILE');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-fuzz-'));
  const clips = path.join(shared, 'media/videos');
  const media = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '').split('?')[0].replace(/^\/+/, ''));
    if (!/^[\w.-]+$/.test(name)) return void res.writeHead(404).end();
    const file = path.join(clips, name);
    let size;
    try {
      size = statSync(file).size;
    } catch {
      return void res.writeHead(404).end();
    }
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': size });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => media.listen(0, '127.0.0.1', r));
  // The webhook receiver: 204 to a registration's verification event, so that a positive registration is
  // stored and its endpoint id reaches rotate, deliveries and redeliver. Events are answered 204 or 500 by the
  // last digit of their webhook-id, so that the delivery log holds delivered deliveries and, past the short
  // retry horizon below, dead ones that can be redelivered.
  const receiver = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const verification = Buffer.concat(chunks).includes('"vision.webhook.verification"');
      const id = String(req.headers['webhook-id'] ?? '');
      const refuse = !verification && parseInt(id.slice(-1), 16) % 2 === 1;
      res.writeHead(refuse ? 500 : 204).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const s = await startStandalone({
    ports: 'ephemeral',
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'warn',
      VISION_DATA_DIR: dataDir,
      VISION_MODELS_DIR: path.join(shared, 'models'),
      VISION_API_KEYS: `${process.env.FUZZ_API_KEY}:fuzz,${process.env.FUZZ_OTHER_KEY}:fuzz-other`,
      // Loopback clips are the only streams this run may reach, and the loopback receiver the only webhook
      // (hooks.py points every other webhook URL at a closed loopback port).
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // Each positive registration stores an endpoint: room for every one of them.
      RESULTS_WEBHOOK_MAX_ENDPOINTS: '1000',
      // A refused delivery is dead after a second (the shortest horizon), so redeliver meets dead ones.
      RESULTS_WEBHOOK_RETRY_BASE_MS: '50',
      RESULTS_WEBHOOK_RETRY_MAX_MS: '200',
      RESULTS_WEBHOOK_RETRY_HORIZON_MS: '1000',
      // A results stream of a running task ends after 5 s: well inside schemathesis's request timeout.
      RESULTS_STREAM_MAX_MS: '5000',
      RESULTS_STREAM_HEARTBEAT_MS: '1000',
      // The fuzzer sends thousands of requests: generous limits so that it explores more than 429s.
      GATEWAY_QPS: '500',
      GATEWAY_BURST: '1000',
      GATEWAY_CONCURRENCY: '64',
      QUOTA_VIDEO_DAILY: '100000',
      QUOTA_IMAGE_DAILY: '100000',
      // The loopback clip must count as reachable even on a loaded CI machine.
      TASKS_PROBE_TIMEOUT_MS: '30000',
      ...Object.fromEntries(
        Object.entries(process.env)
          .filter(([k]) => k.startsWith('FUZZ_ENV_'))
          .map(([k, v]) => [k.slice(9), v]),
      ),
    },
  });
  const { port } = media.address();
  writeFileSync(
    out,
    JSON.stringify({
      url: s.url,
      media: `http://127.0.0.1:${port}`,
      receiver: `http://127.0.0.1:${receiver.address().port}/hook`,
    }),
  );
  const stop = () => {
    media.close();
    receiver.close();
    s.close()
      .catch(() => undefined)
      .finally(() => {
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(0);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
