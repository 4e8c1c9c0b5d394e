import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { firstRefused, type AddressClass } from './address-policy';

/** Every address of a host name. */
export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export type HostCheck =
  | { ok: true; addresses: string[] }
  | { ok: false; unresolvable: true }
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
    } catch {
      return { ok: false, unresolvable: true };
    }
  }
  if (addresses.length === 0) return { ok: false, unresolvable: true };
  const refused = firstRefused(addresses, opts.allowPrivate);
  if (refused) return { ok: false, unresolvable: false, refused };
  return { ok: true, addresses };
}
