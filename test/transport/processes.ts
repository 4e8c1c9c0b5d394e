import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { metrics } from '@vision/shared';
import type { DistributedStack } from '../helpers/distributed';
import type { TestStack } from '../helpers/stack';

// What the processes serving a stack hold, read from /proc: open files, TCP connections, and whether
// the process-wide crash handler was reached. In standalone that is this process; in distributed, the
// service processes the launcher started (their pids are known, and they run on this machine).

/** The processes that serve `stack`: this one in standalone, each service process in distributed. */
export function servicePids(stack: TestStack): Array<{ name: string; pid: number }> {
  if (stack.kind === 'standalone') return [{ name: 'standalone', pid: process.pid }];
  return Object.values((stack as DistributedStack).deployment.procs)
    .flat()
    .flatMap((p) => (p.child?.pid ? [{ name: `${p.name}-${p.index}`, pid: p.child.pid }] : []));
}

/** The targets of the descriptors `pid` holds open ([] once it has exited). */
function descriptors(pid: number | 'self'): string[] {
  const targets: string[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return targets;
  }
  for (const fd of fds) {
    try {
      targets.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // closed while listing
    }
  }
  return targets;
}

/** Paths the processes serving `stack` hold open under `dir`, as `name: path`. */
export function openFilesUnder(stack: TestStack, dir: string): string[] {
  return servicePids(stack).flatMap(({ name, pid }) =>
    descriptors(stack.kind === 'standalone' ? 'self' : pid)
      .filter((t) => t.startsWith(dir))
      .map((t) => `${name}: ${t}`),
  );
}

/** The local and remote ports of each TCP socket of `pid`'s network namespace, by socket inode. */
function tcpSockets(pid: number | 'self'): Map<string, { local: number; remote: number }> {
  const byInode = new Map<string, { local: number; remote: number }>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (addr: string) => parseInt(addr.slice(addr.lastIndexOf(':') + 1), 16);
      byInode.set(f[9], { local: port(f[1]), remote: port(f[2]) });
    }
  }
  return byInode;
}

/**
 * Descriptors the processes serving `stack` hold open for TCP connections with this local and/or
 * remote port, as `name: local->remote`: a connection a vanished client or an aborted call left open.
 */
export function openConnections(stack: TestStack, match: { local?: number; remote?: number }): string[] {
  return servicePids(stack).flatMap(({ name, pid }) => {
    const id = stack.kind === 'standalone' ? 'self' : pid;
    const sockets = tcpSockets(id);
    return descriptors(id).flatMap((t) => {
      const s = sockets.get(/^socket:\[(\d+)\]$/.exec(t)?.[1] ?? '');
      if (!s || (match.local !== undefined && s.local !== match.local)) return [];
      if (match.remote !== undefined && s.remote !== match.remote) return [];
      return [`${name}: ${s.local}->${s.remote}`];
    });
  });
}

/**
 * How often the process-wide crash handler was reached, and which service processes exited: in
 * standalone the handler's counter in this process, in distributed each service's metrics endpoint.
 */
export async function fatalErrors(stack: TestStack): Promise<{ count: number; exited: string[] }> {
  if (stack.kind === 'standalone') {
    const { values } = await metrics.fatalErrors.family.get();
    return { count: values.reduce((n, v) => n + v.value, 0), exited: [] };
  }
  let count = 0;
  const exited: string[] = [];
  for (const p of Object.values((stack as DistributedStack).deployment.procs).flat()) {
    if (p.child && (p.child.exitCode !== null || p.child.signalCode !== null)) {
      exited.push(`${p.name}-${p.index}: ${p.child.exitCode ?? p.child.signalCode}`);
      continue;
    }
    const text = await (await fetch(p.metricsUrl)).text();
    for (const m of text.matchAll(/^vision_fatal_errors_total(?:\{[^}]*\})? (\S+)$/gm)) count += Number(m[1]);
  }
  return { count, exited };
}

/** The port the given service listens on (the gateway's upstream for its routes). */
export function servicePort(stack: TestStack, name: 'images' | 'results' | 'tasks'): number {
  if (stack.kind === 'distributed') return (stack as DistributedStack).deployment.proc(name).port;
  const svc = stack.standalone?.services[name];
  if (!svc) throw new Error(`no ${name} service in the standalone stack`);
  return Number(new URL(svc.url).port);
}

/** onnxruntime opens `<tmp>/mat-debug-<pid>.log` when it loads and holds it for the life of the process. */
const ONNXRUNTIME_LOG = /\/mat-debug-\d+\.log$/;

/**
 * Files the processes serving `stack` hold open where an upload could leave a temporary file: the
 * object directory in standalone; in distributed (objects go to the S3 server) the services' data
 * directory and the system temporary directory, less their own log files and onnxruntime's.
 */
export function openTemporaryFiles(stack: TestStack): string[] {
  if (stack.kind === 'standalone') return openFilesUnder(stack, path.join(stack.dataDir, 'objects'));
  const d = (stack as DistributedStack).deployment;
  const held = [...openFilesUnder(stack, d.dataDir), ...openFilesUnder(stack, os.tmpdir())];
  return [...new Set(held)].filter(
    (f) => !(f.includes(d.logDir) && f.endsWith('.log')) && !ONNXRUNTIME_LOG.test(f),
  );
}
