'use strict';
/**
 * The container runtime of a deployment (launcher.js with `runtime: 'container'`, or VISION_DEPLOYMENT_RUNTIME=container):
 * each service replica runs from the service image (VISION_IMAGE, default localhost/vision:dev) as
 *
 *   podman run -d --name <id>-<label> --network host --read-only --tmpfs /tmp --user 1000:1000 --restart on-failure
 *     -e VAR ... -v PATH:PATH:ro|rw ... IMAGE node --require /app/scripts/distributed/loopback.js services/<name>/dist/main.js
 *
 * - The environment is the process mode's (serviceEnv), less the host's PATH and HOME. Values are handed to podman
 *   through its own environment (`-e VAR` without a value), so no secret is on a command line.
 * - Every host path the environment names (models, identity directory, data directory, CA bundle) is mounted at the
 *   same path: read-only, the data directory read-write. The deployment's own files (identity keys are 0600) are
 *   handed to uid 1000 first. A path uid 1000 could not reach through its ancestors (a file under a 0700 home) is
 *   mounted under /run/host instead, and its variable names that path in the container.
 * - loopback.js (in the image under /app/scripts) is preloaded as in process mode: with the host's network, a service
 *   binding the wildcard address would listen on every interface of the machine; it stays on 127.0.0.1.
 * - podman (conmon) writes the container's output to <logDir>/<label>.log (k8s-file format: time, stream, line),
 *   appending across restarts.
 * - `podman kill` and `podman stop` end a container for good (the restart policy ignores them); a process that dies
 *   otherwise (a crash, SIGKILL of its host pid) is started again by podman through the restart policy.
 */
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { sleep } = require('./stack-servers');
const { runLogged } = require('./service-env');

const DEFAULT_IMAGE = 'localhost/vision:dev';
const USER = '1000:1000';
const PRELOAD = '/app/scripts/distributed/loopback.js';
/** The host's own variables: the image has its PATH, and the container user its HOME. */
const HOST_ONLY = new Set(['PATH', 'HOME']);

/** Runs podman to completion; resolves with its stdout, rejects with its stderr. */
function podman(args, { env = process.env, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile('podman', args, { env, timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`podman ${args[0]} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Gives a directory tree to the container user (only possible, and only needed, for a root podman). */
function chownTree(dir) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0 || !fs.existsSync(dir)) return;
  const [uid, gid] = USER.split(':').map(Number);
  fs.chownSync(dir, uid, gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p);
    else fs.chownSync(p, uid, gid);
  }
}

/** True when a user other than the owner can reach `p`: every ancestor searchable, the path itself readable. */
function reachableByOthers(p) {
  const st = fs.statSync(p);
  if (!(st.mode & 0o004)) return false;
  for (let dir = path.dirname(p); ; dir = path.dirname(dir)) {
    if (!(fs.statSync(dir).mode & 0o001)) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

class ContainerRuntime {
  /** `d`: the Deployment (its id, logDir, dataDir and label()). */
  constructor(d, image) {
    this.d = d;
    this.image = image || process.env.VISION_IMAGE || DEFAULT_IMAGE;
    /** Every container name this deployment used, removed by removeAll(). */
    this.names = new Set();
    chownTree(d.dataDir);
  }

  name(label) {
    return `${this.d.id}-${label}`;
  }

  /**
   * The flags common to every container (env names, mounts, and the hardening of the image's contract), and the
   * environment podman hands over: a host path the container user could not reach through its ancestors (a file
   * under a 0700 home, say the https test CA under /root/.cache) is mounted under /run/host instead, and its
   * variable names that path in the container.
   */
  containerArgs(env) {
    const vars = Object.keys(env).filter((k) => !HOST_ONLY.has(k) && env[k] !== undefined);
    const mounts = new Map();
    const values = {};
    for (const k of vars) {
      const v = env[k];
      if (!path.isAbsolute(v) || !fs.existsSync(v)) continue;
      const writable = k === 'VISION_DATA_DIR';
      const inside = writable || reachableByOthers(v) ? v : `/run/host${v}`;
      if (inside !== v) values[k] = inside;
      if (!mounts.has(v) || writable) mounts.set(v, { inside, mode: writable ? 'rw' : 'ro' });
    }
    return {
      flags: [
        ...['--network', 'host', '--read-only', '--tmpfs', '/tmp', '--user', USER],
        ...vars.flatMap((k) => ['-e', k]),
        ...[...mounts].flatMap(([p, m]) => ['-v', `${p}:${m.inside}:${m.mode}`]),
      ],
      env: { ...process.env, ...env, ...values },
    };
  }

  /** Runs `node scripts/migrate.js` from the image to completion, its output in <logDir>/migrate.log. */
  async migrate(env) {
    const name = this.name('migrate');
    this.names.add(name);
    await podman(['rm', '-f', '--ignore', name]);
    const c = this.containerArgs(env);
    const args = ['run', '--rm', '--name', name, ...c.flags, this.image, 'node', 'scripts/migrate.js'];
    await runLogged(this.d.logDir, 'podman', args, c.env, 'migrate');
  }

  /** Starts one service replica (`p`, its env) in a container; p.child follows the container's main process. */
  async start(p, env) {
    const label = this.d.label(p);
    const name = this.name(label);
    this.names.add(name);
    await podman(['rm', '-f', '--ignore', name]);
    const log = path.join(this.d.logDir, `${label}.log`);
    const c = this.containerArgs(env);
    await podman(
      [
        'run',
        '-d',
        '--name',
        name,
        '--restart',
        'on-failure',
        '--log-driver',
        'k8s-file',
        '--log-opt',
        `path=${log}`,
        ...c.flags,
        this.image,
        ...['node', '--require', PRELOAD, `services/${p.name}/dist/main.js`],
      ],
      { env: c.env },
    );
    // A new container: restarts are counted from 0 (refresh() takes one as a failed start).
    p.child = { pid: (await this.inspect(p)).State.Pid, exitCode: null, signalCode: null, restarts: 0 };
    p.exited = undefined;
  }

  /** `podman inspect` of a replica's container. */
  async inspect(p) {
    const [info] = JSON.parse(await podman(['inspect', '--type', 'container', this.name(this.d.label(p))]));
    return info;
  }

  /**
   * Brings p.child up to date: the current host pid, or the exit code once the container has ended or was
   * restarted since it was started (while a start is awaited, that means it failed).
   */
  async refresh(p) {
    const s = await this.inspect(p).catch(() => undefined);
    if (!s) p.child.exitCode = p.child.exitCode ?? -1;
    // Restarted by the policy: it failed (podman keeps no earlier exit code once it runs again).
    else if (s.RestartCount > p.child.restarts) p.child.exitCode = s.State.Running ? -1 : s.State.ExitCode;
    else if (!s.State.Running) p.child.exitCode = s.State.ExitCode;
    else p.child.pid = s.State.Pid;
  }

  /** Sends `signal` to a replica's container (podman kill: no restart follows), and waits until it has exited. */
  async kill(p, signal, timeoutMs) {
    const name = this.name(this.d.label(p));
    const s = await this.inspect(p).catch(() => undefined);
    if (!s || !s.State.Running) return;
    await podman(['kill', '--signal', signal.replace(/^SIG/, ''), name]).catch(() => undefined);
    const t = setTimeout(() => podman(['kill', '--signal', 'KILL', name]).catch(() => undefined), timeoutMs);
    const code = await podman(['wait', name], { timeoutMs: timeoutMs + 30_000 }).catch(() => '-1');
    clearTimeout(t);
    p.child.exitCode = Number(code.trim());
    p.child.signalCode = signal;
    p.exited = Promise.resolve({ code: p.child.exitCode, signal });
  }

  /**
   * Kills a replica's main process with SIGKILL from the host (its pid outside the container), as a crash would,
   * and waits until podman's restart policy has started it again. Resolves with the pids and restart counts.
   */
  async crash(p, timeoutMs = 60_000) {
    const before = await this.inspect(p);
    process.kill(before.State.Pid, 'SIGKILL');
    const end = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.inspect(p);
      if (s.RestartCount > before.RestartCount && s.State.Running && s.State.Pid !== before.State.Pid) {
        p.child = { pid: s.State.Pid, exitCode: null, signalCode: null, restarts: s.RestartCount };
        return {
          before: { pid: before.State.Pid, restarts: before.RestartCount },
          after: { pid: s.State.Pid, restarts: s.RestartCount },
        };
      }
      if (Date.now() > end)
        throw new Error(
          `${this.name(this.d.label(p))} not restarted after ${timeoutMs} ms: ${s.State.Status}`,
        );
      await sleep(300);
    }
  }

  /** Removes every container of the deployment (running or not). */
  async removeAll() {
    const listed = await podman(['ps', '-a', '--format', '{{.Names}}', '--filter', `name=^${this.d.id}-`]);
    const names = new Set([...this.names, ...listed.split('\n').filter(Boolean)]);
    if (names.size) await podman(['rm', '-f', '--ignore', ...names], { timeoutMs: 180_000 });
  }
}

module.exports = { ContainerRuntime, DEFAULT_IMAGE };
