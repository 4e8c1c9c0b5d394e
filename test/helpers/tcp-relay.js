'use strict';
/**
 * A TCP relay in a process of its own, for fault tests: `node tcp-relay.js` listens on a free loopback port
 * (printed as `listening <port>`; each command below is acknowledged with `ok <command>`) and joins each connection to 127.0.0.1:<target>, the port of the line
 * `target <port>` read from stdin (a connection made before that line waits for it).
 * - SIGSTOP / SIGCONT: the relay stops; the kernel still accepts connections on its socket and nothing answers.
 * - stdin lines `slow` / `fast`: from now on each byte from the target reaches the caller 10 s late / at once
 *   (a backend that answers after 10 s).
 */
const net = require('node:net');

const SLOW_MS = 10_000;
let delayMs = 0;
let setTarget;
const target = new Promise((resolve) => (setTarget = resolve));
let input = '';
process.stdin.on('data', (b) => {
  input += b;
  const lines = input.split('\n');
  input = lines.pop();
  for (const line of lines) {
    const m = /^target (\d+)$/.exec(line);
    if (m) setTarget(Number(m[1]));
    else if (line === 'slow') delayMs = SLOW_MS;
    else if (line === 'fast') delayMs = 0;
    else continue;
    process.stdout.write(`ok ${line}\n`);
  }
});

const server = net.createServer(async (caller) => {
  caller.pause();
  const upstream = net.connect(await target, '127.0.0.1');
  const drop = () => {
    caller.destroy();
    upstream.destroy();
  };
  caller.on('error', drop);
  upstream.on('error', drop);
  caller.on('close', drop);
  caller.pipe(upstream);
  // Each chunk keeps its place: a later one is never written before an earlier one.
  let last = Promise.resolve();
  const later = (fn) => {
    const wait = delayMs;
    last = last.then(() => (wait ? new Promise((r) => setTimeout(r, wait)) : undefined)).then(fn);
  };
  upstream.on('data', (chunk) => later(() => caller.write(chunk)));
  upstream.on('end', () => later(() => caller.end()));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
