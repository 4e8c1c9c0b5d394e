/**
 * runMain, the process entry of every service: a stop asked for while the service is still starting (SIGTERM to a
 * container's PID 1, which has no default action for it) is carried out, cleanly, once the service has started.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

/** The built package, as a service's main.js loads it (npm run build). */
const SHARED = path.join(__dirname, '../dist/index.js');

/**
 * Runs a service whose start takes `startMs` and sends it SIGTERM `signalMs` after its start began; resolves with
 * how the process ended and what it wrote.
 */
function runAndStop(
  startMs: number,
  signalMs: number,
): Promise<{ code: number | null; signal: string | null; out: string }> {
  const script = `
    const { runMain } = require(${JSON.stringify(SHARED)});
    runMain('probe', () => {
      process.stdout.write('probe starting\\n');
      return new Promise((resolve) => setTimeout(() => resolve({
        name: 'probe', port: 1, url: 'http://127.0.0.1:1',
        close: async () => { process.stdout.write('probe closed\\n'); },
      }), ${startMs}));
    });
  `;
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let timer: NodeJS.Timeout | undefined;
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
    if (!timer && out.includes('probe starting')) timer = setTimeout(() => child.kill('SIGTERM'), signalMs);
  });
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

describe('runMain', () => {
  test('a SIGTERM while the service starts stops it once it has started, closing it', async () => {
    const r = await runAndStop(1500, 300);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(r.out).toContain('probe: SIGTERM while starting, stopping once started');
    expect(r.out).toMatch(/probe listening on [\s\S]*probe: SIGTERM, stopping\nprobe closed/);
  }, 20_000);

  test('a SIGTERM after the start closes the service', async () => {
    const r = await runAndStop(100, 1000);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('while starting');
    expect(r.out).toMatch(/probe: SIGTERM, stopping\nprobe closed/);
  }, 20_000);
});
