/**
 * Runs one of slowhttptest's attacks (Debian package `slowhttptest`) against a gateway while a
 * well-behaved client keeps calling it, and reports what each saw. Used by
 * bench/slow-attacks.bench.js (figures against targets) and test/transport/slow-attacks.test.ts
 * (correctness only: every well-behaved call answered, none with a 5xx).
 *
 *   const { runAttack, startAttack, wellBehaved } = require('./scripts/transport/slow-attack');
 *
 * Attacks (the unauthenticated surface a stranger reaches):
 *   slowloris  -H: heads sent a header line every `intervalS`, never finished;
 *   slow-body  -B: a declared 1 MB POST body sent a few bytes every `intervalS`;
 *   slow-read  -X: GET /openapi.json read a few bytes at a time through a tiny TCP window.
 */
const { spawn } = require('node:child_process');

const ATTACKS = {
  slowloris: (url) => ['-H', '-u', `${url}/api/op/v1/scenes`],
  'slow-body': (url) => ['-B', '-u', `${url}/v1/vision/image-detections`, '-s', '1000000'],
  'slow-read': (url) => [
    '-X',
    '-u',
    `${url}/openapi.json`,
    '-k',
    '3',
    '-n',
    '1',
    '-w',
    '16',
    '-y',
    '64',
    '-z',
    '32',
  ],
};

/** p-quantile of a list of numbers (nearest rank); NaN when empty. */
function quantile(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
}

/** One call of the well-behaved client: `GET /v1/vision/quota` with `key`; its latency and status (0: no HTTP answer). */
async function wellBehavedCall(url, key) {
  const t0 = performance.now();
  let status;
  try {
    const res = await fetch(`${url}/v1/vision/quota`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    status = res.status;
  } catch {
    status = 0;
  }
  return { ms: performance.now() - t0, status };
}

/** The well-behaved client's calls, one every `gapMs` for `seconds`; resolves with each call's latency and status. */
async function wellBehaved(url, key, seconds, gapMs = 50) {
  const calls = [];
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    calls.push(await wellBehavedCall(url, key));
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return calls;
}

/** The largest "connected" count slowhttptest printed: connections the server held open at once. */
function peakConnected(output) {
  let peak = 0;
  // eslint-disable-next-line no-control-regex -- its status screen is coloured with ANSI escapes
  const plain = output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
  for (const m of plain.matchAll(/connected:\s+(\d+)/g)) peak = Math.max(peak, Number(m[1]));
  return peak;
}

/**
 * Starts `attack` with `connections` connections for at most `seconds`. `held(n)` resolves once slowhttptest
 * reports at least `n` connections open at once (rejects if it ends first); `stop()` cancels it and resolves with
 * its exit code; `peak()` is the largest count it reported; `output` what it printed.
 */
function startAttack(url, attack, { seconds = 30, connections = 1000, rate = 200, intervalS = 5 } = {}) {
  const args = [
    ...ATTACKS[attack](url),
    '-c',
    String(connections),
    '-r',
    String(rate),
    '-l',
    String(seconds),
    '-i',
    String(intervalS),
    '-p',
    '5',
  ];
  // Line-buffered (coreutils' stdbuf): into a pipe its status would otherwise arrive in 4 KiB blocks, late.
  const child = spawn('stdbuf', ['-oL', 'slowhttptest', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = new Set();
  const settle = () => {
    const peak = peakConnected(output);
    for (const w of waiters) {
      if (peak < w.n) continue;
      waiters.delete(w);
      w.resolve();
    }
  };
  const onData = (c) => {
    output += c.toString();
    settle();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let ended = false;
  const exited = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  }).finally(() => {
    ended = true;
    for (const w of waiters)
      w.reject(new Error(`slowhttptest ended before it held ${w.n} connections:\n${output}`));
    waiters.clear();
  });
  return {
    get output() {
      return output;
    },
    peak: () => peakConnected(output),
    held: (n) =>
      new Promise((resolve, reject) => {
        if (ended) return reject(new Error(`slowhttptest ended before it held ${n} connections`));
        waiters.add({ n, resolve, reject });
        settle();
      }),
    stop: () => {
      if (!ended) child.kill('SIGINT');
      return exited;
    },
    exited,
  };
}

/**
 * Runs `attack` for `seconds` with `connections` connections, and the well-behaved client beside it.
 * Resolves with { attack, connectionsHeld, calls, p99, fiveXx, failed, exitCode }.
 */
async function runAttack(
  url,
  key,
  attack,
  { seconds = 30, connections = 1000, rate = 200, intervalS = 5 } = {},
) {
  const running = startAttack(url, attack, { seconds, connections, rate, intervalS });
  // The attack ramps up at `rate` connections a second: the client starts once it is at full size.
  await new Promise((r) => setTimeout(r, Math.min(seconds / 2, connections / rate) * 1000));
  const calls = await wellBehaved(url, key, Math.max(1, seconds - connections / rate - 2));
  const exitCode = await running.exited;
  const ms = calls.map((c) => c.ms);
  return {
    attack,
    connectionsHeld: running.peak(),
    calls: calls.length,
    p99: quantile(ms, 0.99),
    fiveXx: calls.filter((c) => c.status >= 500).length,
    failed: calls.filter((c) => c.status !== 200).length,
    exitCode,
    output: running.output,
  };
}

module.exports = { ATTACKS, runAttack, startAttack, wellBehaved, wellBehavedCall, quantile };
