'use strict';
/**
 * A live stream for the soak's live tasks: GET /live/<anything> is an endless MPEG-TS stream of one
 * clip at real-time pace (ffmpeg -re, looped), one ffmpeg per client, on loopback.
 */
const { spawn } = require('node:child_process');
const http = require('node:http');

async function startLiveServer(clip) {
  const children = new Set();
  const server = http.createServer((req, res) => {
    if (!/^\/live\//.test(req.url ?? '')) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'video/mp2t' });
    if (req.method === 'HEAD') return void res.end();
    const ff = spawn(
      'ffmpeg',
      [
        '-loglevel',
        'error',
        '-re',
        '-stream_loop',
        '-1',
        '-i',
        clip,
        '-an',
        '-c',
        'copy',
        '-f',
        'mpegts',
        'pipe:1',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.add(ff);
    ff.stdout.pipe(res);
    res.on('close', () => {
      ff.kill('SIGKILL');
      children.delete(ff);
    });
    ff.on('exit', () => res.end());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    async close() {
      for (const ch of children) ch.kill('SIGKILL');
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

module.exports = { startLiveServer };
