'use strict';
/**
 * Loopback ports for what the tests and benches start: a deployment's services, stream servers, standalone
 * processes. Every pick is below the kernel's ephemeral range (32768-60999), so no client socket of this machine can
 * take the port between the check and the bind, and outside the stack servers' fixed ports (23133-29396,
 * scripts/stack/common.sh) and the node's (10248-10259, kube-router's 20244).
 *
 * Runs on different sets of the stack's servers (VISION_STACK_SET: the first, `node`, `kafka`) go on side by side in
 * `npm test`, each in jest processes of its own. Each set therefore picks from ranges of its own: a port one run
 * picked and has not bound yet (a container takes seconds to listen) is never the pick of another.
 *   services  a deployment's service processes or containers, and their metrics ports
 *   streams   stream servers, standalone processes, anything else a test starts
 */
const net = require('node:net');

const RANGES = {
  '': { services: [30000, 30899], streams: [14000, 19999] },
  node: { services: [30900, 31799], streams: [12000, 13999] },
  kafka: { services: [31800, 32699], streams: [11000, 11999] },
};

/** The range of `kind` for the set of servers in use (VISION_STACK_SET). */
function portRange(kind) {
  const set = RANGES[process.env.VISION_STACK_SET || ''] ?? RANGES[''];
  const [from, to] = set[kind];
  return { from, to };
}

/**
 * Ports this process handed out, with when: a caller may pick several ports before anything binds them, so a port is
 * not handed out again for HANDED_OUT_MS (after that it is bound, or free again).
 */
const handedOut = new Map();
const HANDED_OUT_MS = 5 * 60_000;

function canListen(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port of the range of `kind` ('services' or 'streams') that nothing listens on now and was not handed out. */
async function freePort(kind = 'streams') {
  const { from, to } = portRange(kind);
  const span = to - from + 1;
  for (let i = 0; i < 500; i++) {
    const port = from + Math.floor(Math.random() * span);
    if (Date.now() - (handedOut.get(port) ?? -Infinity) < HANDED_OUT_MS || !(await canListen(port))) continue;
    handedOut.set(port, Date.now());
    return port;
  }
  throw new Error(`no free port from ${from} to ${to}`);
}

module.exports = { portRange, freePort };
