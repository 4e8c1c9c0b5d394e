import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { firstRefused, type AddressClass } from './address-policy';
import { timeoutRecorder } from '../calls/service-client';

/** Every address of a host name. */
export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** A caller's host whose name servers did not answer within the deadline (streamResolver). */
export class DnsTimeoutError extends Error {
  constructor() {
    super('the host name did not resolve in time');
  }
}

export interface StreamDnsOptions {
  /** Name servers (`ip` or `ip:port`) for callers' stream hosts; the system's when empty. */
  servers?: string[];
  /** Deadline of one resolution. */
  timeoutMs: number;
}

const codeOf = (r: PromiseSettledResult<unknown>): string | undefined =>
  r.status === 'rejected' ? (r.reason as { code?: string } | undefined)?.code : undefined;

/**
 * The resolver of callers' stream hosts: a slow answer from the caller's name server must not stall
 * anyone else. It asks with c-ares (on the event loop, not in libuv's four-thread pool that
 * `dns.lookup` blocks while waiting, together with file and crypto work) and gives up after
 * `timeoutMs` (DnsTimeoutError: the caller's host, not our failure). Only after the name servers
 * answered quickly that the name has no address does it ask the system (`/etc/hosts`, search domains);
 * with `servers` given their answer is final.
 */
export function streamResolver(o: StreamDnsOptions): HostResolver {
  const r = new dns.Resolver({ timeout: Math.max(50, Math.floor(o.timeoutMs / 2)), tries: 1 });
  if (o.servers && o.servers.length > 0) r.setServers(o.servers);
  const ask = async (host: string): Promise<string[]> => {
    const answers = await Promise.allSettled([r.resolve4(host), r.resolve6(host)]);
    const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
    if (addresses.length > 0) return addresses;
    if (answers.some((a) => codeOf(a) === 'ETIMEOUT')) throw new DnsTimeoutError();
    if (o.servers && o.servers.length > 0) throw new Error('no address');
    return systemResolver(host);
  };
  return (host) => {
    // A timeout goes on the span active now (error.type=timeout, timeout_ms, `timeout` event), not into
    // vision_upstream_timeouts_total: the caller's name server is not one of our upstreams.
    const onTimeout = timeoutRecorder('stream_dns', o.timeoutMs, false);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DnsTimeoutError()), o.timeoutMs);
    });
    return Promise.race([ask(host), deadline])
      .catch((err: unknown) => {
        if (err instanceof DnsTimeoutError) onTimeout();
        throw err;
      })
      .finally(() => clearTimeout(timer));
  };
}

export type HostCheck =
  | { ok: true; addresses: string[] }
  | { ok: false; unresolvable: true; timedOut?: true }
  | { ok: false; unresolvable: false; refused: { address: string; cls: AddressClass } };

/**
 * Resolves `hostname` (an IP literal, bracketed or not, is its own address) and applies the address
 * policy (address-policy.ts) to every address: one refused address refuses the host. The one
 * resolve-and-check of the stream guards (tasks, inference) and the egress proxy.
 */
export async function checkHostAddresses(
  hostname: string,
  opts: { allowPrivate: boolean; resolve?: HostResolver },
): Promise<HostCheck> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await (opts.resolve ?? systemResolver)(host);
    } catch (err) {
      return err instanceof DnsTimeoutError
        ? { ok: false, unresolvable: true, timedOut: true }
        : { ok: false, unresolvable: true };
    }
  }
  if (addresses.length === 0) return { ok: false, unresolvable: true };
  const refused = firstRefused(addresses, opts.allowPrivate);
  if (refused) return { ok: false, unresolvable: false, refused };
  return { ok: true, addresses };
}
