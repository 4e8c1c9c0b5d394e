/**
 * `npm start`'s process (apps/standalone/dist/main.js, built by `npm test` first): it listens on HOST
 * with the gateway only, starts beside another instance and beside whatever holds 8101-8105, and names
 * the variable to change when its address is really taken.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const MAIN = path.resolve(__dirname, '../../apps/standalone/dist/main.js');
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../shared');

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const dirs: string[] = [];
const children: ChildProcess[] = [];

function startMain(env: Record<string, string>): Started {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'standalone-listen-'));
  dirs.push(dataDir);
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      VISION_DATA_DIR: dataDir,
      VISION_MODELS_DIR: path.join(SHARED_DIR, 'models'),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

async function ready(s: Started): Promise<void> {
  const until = Date.now() + 90_000;
  while (!s.output().includes(' is up at ')) {
    if (s.child.exitCode !== null) throw new Error(`exited ${s.child.exitCode}: ${s.output()}`);
    if (Date.now() > until) throw new Error(`not ready: ${s.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The TCP addresses (ip:port) a process listens on, read from /proc (its sockets' inodes). */
function listening(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const out: string[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const lines = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f[3] !== '0A' || !inodes.has(f[9])) continue; // 0A: LISTEN
      const [hex, port] = f[1].split(':');
      const ip =
        hex.length === 8
          ? hex
              .match(/../g)!
              .reverse()
              .map((b) => parseInt(b, 16))
              .join('.')
          : hex === '0'.repeat(32)
            ? '::'
            : `v6:${hex}`;
      out.push(`${ip}:${parseInt(port, 16)}`);
    }
  }
  return out.sort();
}

/**
 * A port nothing listens on, below the kernel's ephemeral range (32768 and up here): a port the kernel
 * handed out and took back could be handed to the next `listen(0)` of a process starting beside it,
 * before the process it was chosen for binds it.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

describe('the standalone process on the network', () => {
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('with HOST=0.0.0.0 only the gateway listens beyond loopback; metrics stay on loopback', async () => {
    const port = await freePort();
    const s = startMain({ HOST: '0.0.0.0', PORT: String(port), METRICS_PORT: String(await freePort()) });
    await ready(s);
    const addrs = listening(s.child.pid!);
    expect(addrs).toContain(`0.0.0.0:${port}`);
    // The five services, the metrics endpoint and the egress relays listen too, all on loopback.
    expect(addrs.filter((a) => !a.startsWith('127.0.0.1:'))).toEqual([`0.0.0.0:${port}`]);
    expect(addrs.length).toBeGreaterThanOrEqual(7);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }, 120_000);

  it('starts beside another instance and beside whatever holds 8101-8105', async () => {
    const blockers = await Promise.all(
      [8101, 8102, 8103, 8104, 8105].map(
        (p) =>
          new Promise<net.Server | undefined>((resolve) => {
            const b = net.createServer();
            b.once('error', () => resolve(undefined)); // already taken by something else: as good
            b.listen(p, '127.0.0.1', () => resolve(b));
          }),
      ),
    );
    try {
      const a = startMain({ PORT: String(await freePort()), METRICS_PORT: String(await freePort()) });
      const b = startMain({ PORT: String(await freePort()), METRICS_PORT: String(await freePort()) });
      await Promise.all([ready(a), ready(b)]);
      for (const s of [a, b]) {
        const url = /is up at (\S+)/.exec(s.output())![1];
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
        s.child.kill('SIGTERM');
        expect(await s.exited).toBe(0);
      }
    } finally {
      for (const b of blockers) b?.close();
    }
  }, 180_000);

  it('names the address and the variable that moves it when PORT is taken', async () => {
    const taken = net.createServer();
    const port = await new Promise<number>((r) =>
      taken.listen(0, '127.0.0.1', () => r((taken.address() as net.AddressInfo).port)),
    );
    try {
      const s = startMain({ PORT: String(port), METRICS_PORT: String(await freePort()) });
      expect(await s.exited).toBe(2);
      expect(s.output()).toContain(
        `cannot listen on 127.0.0.1:${port} (EADDRINUSE): set PORT to another port`,
      );
    } finally {
      taken.close();
    }
  }, 120_000);
});
