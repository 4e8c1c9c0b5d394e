import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { metrics } from '@vision/shared';
import type { ContainerInfo, ServiceProcess } from '../../scripts/distributed/launcher';
import type { DistributedStack } from '../helpers/distributed';
import type { TestStack } from '../helpers/stack';

// What the processes serving a stack hold, read from /proc: open files, TCP connections, and whether
// the process-wide crash handler was reached. In standalone that is this process; in distributed, the
// service processes the launcher started (they run on this machine: as children, or as the main
// processes of containers, whose current host pid and restarts `podman inspect` gives).

/** `podman inspect` of a replica's container (container mode). */
function inspectSync(stack: DistributedStack, p: ServiceProcess): ContainerInfo {
  const d = stack.deployment;
  const name = d.containers!.name(d.label(p));
  const out = execFileSync('podman', ['inspect', '--type', 'container', name], { encoding: 'utf8' });
  return (JSON.parse(out) as ContainerInfo[])[0];
}

/** The processes that serve `stack`: this one in standalone, each service process in distributed. */
export function servicePids(stack: TestStack): Array<{ name: string; pid: number }> {
  if (stack.kind === 'standalone') return [{ name: 'standalone', pid: process.pid }];
  const d = (stack as DistributedStack).deployment;
  return Object.values(d.procs)
    .flat()
    .flatMap((p) => {
      if (!p.child?.pid) return [];
      // A container's main process gets a new pid when podman restarts it.
      const pid = d.containers ? inspectSync(stack as DistributedStack, p).State.Pid : p.child.pid;
      return [{ name: `${p.name}-${p.index}`, pid }];
    });
}

/** The targets of the descriptors `pid` holds open; throws when they cannot be read. */
function descriptors(name: string, pid: number | 'self'): string[] {
  const targets: string[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch (err) {
    throw new Error(`cannot read the descriptors of ${name} (pid ${pid}): ${String(err)}`, { cause: err });
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

/**
 * The descriptors of each process serving `stack`, each list checked to hold a listening TCP socket
 * (every service process has one): a list read wrongly cannot pass for a process that holds nothing.
 */
function serviceDescriptors(stack: TestStack): Array<{ name: string; id: number | 'self'; fds: string[] }> {
  return servicePids(stack).map(({ name, pid }) => {
    const id = stack.kind === 'standalone' ? ('self' as const) : pid;
    const fds = descriptors(name, id);
    const sockets = tcpSockets(id);
    const listening = fds.some((t) => sockets.get(/^socket:\[(\d+)\]$/.exec(t)?.[1] ?? '')?.listening);
    if (!listening)
      throw new Error(`no listening socket among the ${fds.length} descriptors read of ${name}`);
    return { name, id, fds };
  });
}

/** Paths the processes serving `stack` hold open under `dir`, as `name: path`. */
export function openFilesUnder(stack: TestStack, dir: string): string[] {
  return serviceDescriptors(stack).flatMap(({ name, fds }) =>
    fds.filter((t) => t.startsWith(dir)).map((t) => `${name}: ${t}`),
  );
}

type TcpSocket = { local: number; remote: number; listening: boolean };

/** The local and remote ports of each TCP socket of `pid`'s network namespace, by socket inode. */
function tcpSockets(pid: number | 'self'): Map<string, TcpSocket> {
  const byInode = new Map<string, TcpSocket>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch (err) {
      if (table === 'tcp6') continue; // no IPv6 on this machine
      throw new Error(`cannot read /proc/${pid}/net/${table}: ${String(err)}`, { cause: err });
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (addr: string) => parseInt(addr.slice(addr.lastIndexOf(':') + 1), 16);
      byInode.set(f[9], { local: port(f[1]), remote: port(f[2]), listening: f[3] === '0A' });
    }
  }
  return byInode;
}

/**
 * Descriptors the processes serving `stack` hold open for TCP connections with this local and/or
 * remote port, as `name: local->remote`: a connection a vanished client or an aborted call left open.
 */
export function openConnections(stack: TestStack, match: { local?: number; remote?: number }): string[] {
  return serviceDescriptors(stack).flatMap(({ name, id, fds }) => {
    const sockets = tcpSockets(id);
    return fds.flatMap((t) => {
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
 * In container mode podman restarts a process that exited (its new process counts from 0), so a
 * container that is not running, or was restarted more often than the launcher restarted it on
 * purpose (crash()), counts as exited, with its restarts and last exit code.
 */
export async function fatalErrors(stack: TestStack): Promise<{ count: number; exited: string[] }> {
  if (stack.kind === 'standalone') {
    const { values } = await metrics.fatalErrors.family.get();
    return { count: values.reduce((n, v) => n + v.value, 0), exited: [] };
  }
  let count = 0;
  const exited: string[] = [];
  const d = (stack as DistributedStack).deployment;
  for (const p of Object.values(d.procs).flat()) {
    const label = `${p.name}-${p.index}`;
    if (d.containers && p.child) {
      const s = await d.containers.inspect(p);
      const expected = 'restarts' in p.child ? p.child.restarts : 0;
      if (!s.State.Running) {
        exited.push(`${label}: ${s.State.ExitCode}`);
        continue;
      }
      // Running again: podman keeps no exit code of the process it replaced.
      if (s.RestartCount !== expected) {
        exited.push(`${label}: restarted by podman ${s.RestartCount - expected} time(s)`);
        continue;
      }
    } else if (p.child && (p.child.exitCode !== null || p.child.signalCode !== null)) {
      exited.push(`${label}: ${p.child.exitCode ?? p.child.signalCode}`);
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
