'use strict';
/**
 * A camera-like RTSP stream for the live benches: gst-rtsp-server (scripts/stack/live/rtsp-server.py, installed
 * by scripts/stack/live/install.sh) looping the clip of scripts/stack/live/media.sh (keyframe every second) on a
 * free loopback port. Resolves with `{ url, stop() }` once the server says it is ready.
 */
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const { freePort } = require('./standalone-child');

const root = path.resolve(__dirname, '../..');

async function startRtspServer() {
  const media = execFileSync('bash', [path.join(root, 'scripts/stack/live/media.sh')], {
    encoding: 'utf8',
  }).trim();
  const port = await freePort();
  const child = spawn(
    '/usr/bin/python3',
    [
      path.join(root, 'scripts/stack/live/rtsp-server.py'),
      '--port',
      String(port),
      '--clip',
      path.join(media, 'camera.ts'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => d.toString().includes('ready ') && resolve());
    child.once('exit', (code) => reject(new Error(`rtsp server exited ${code}`)));
  });
  return { url: `rtsp://127.0.0.1:${port}/cam`, stop: () => child.kill('SIGTERM') };
}

module.exports = { startRtspServer };
