'use strict';
/**
 * The floor under a refusal's cost: a bare node:http server, in a process of its own, that reads a call's
 * body away and answers 503 with an error body, Retry-After and keep-alive, as the door must. Its CPU per
 * call under the same open-loop generator is what no design of the door can go under on this machine.
 */
const { spawn } = require('node:child_process');
const { cpuSecondsOf } = require('./load-probes');

const SERVER = `
const http = require('node:http');
const body = JSON.stringify({ error: { code: 'OP-SYS-UNAVAILABLE', message: 'The service is at capacity, retry in 1 s',
  details: { reason: 'overloaded', retry_after_s: 1 }, request_id: '0123456789abcdef' } });
const server = http.createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));
`;

/** CPU (ms) per call of the bare server under `run(url)` (an open-loop burst answering its results). */
async function refusalFloorMs(run) {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(/port (\d+)/.exec(String(d))[1]));
      child.once('exit', (code) => reject(new Error(`the floor's server exited with ${code}`)));
    });
    const url = `http://127.0.0.1:${port}`;
    await run(url); // warm-up: the same code paths compiled as in the door's process
    const c0 = cpuSecondsOf([child.pid]);
    const rs = await run(url);
    return ((cpuSecondsOf([child.pid]) - c0) / rs.length) * 1000;
  } finally {
    child.kill();
  }
}

module.exports = { refusalFloorMs };
