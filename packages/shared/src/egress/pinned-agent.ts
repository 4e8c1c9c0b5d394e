/**
 * Pinned egress for connections to hosts a caller named (stream URLs, webhook targets): the host is
 * resolved once, its addresses are checked against the policy (host-check.ts), and the connection is
 * dialled only to those checked addresses. The name is never resolved a second time, so a name server
 * that answers a public address first and an internal one later (DNS rebinding) cannot steer it.
 * TLS still verifies the certificate against the host name in the URL.
 *
 * Requests to callers' hosts carry no trace context or baggage: they run in a context with tracing
 * suppressed, so the undici instrumentation neither records nor propagates them.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { ROOT_CONTEXT, context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { Agent, fetch as undiciFetch, type RequestInit, type Response } from 'undici';

export type PinnedResponse = Response;
export type PinnedRequestInit = Omit<RequestInit, 'dispatcher'>;

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` that answers only with `addresses` (already checked),
 * whatever the host name: the connection can reach no other address.
 */
export function pinnedLookup(addresses: readonly string[]) {
  const answers: LookupAddress[] = addresses
    .filter((a) => isIP(a) !== 0)
    .map((address) => ({ address, family: isIP(address) }));
  return (_hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    if (answers.length === 0) {
      const err: NodeJS.ErrnoException = new Error('no checked address to connect to');
      err.code = 'ENOTFOUND';
      callback(err, '');
      return;
    }
    const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
    const fitting = wanted === 0 ? answers : answers.filter((a) => a.family === wanted);
    if (fitting.length === 0) {
      const err: NodeJS.ErrnoException = new Error('no checked address of that family');
      err.code = 'ENOTFOUND';
      callback(err, '');
      return;
    }
    if (options.all === true) callback(null, fitting);
    else callback(null, fitting[0].address, fitting[0].family);
  };
}

/** An undici dispatcher whose every connection goes to one of `addresses` (checked by the caller). */
export function pinnedAgent(addresses: readonly string[], opts: { connectTimeoutMs?: number } = {}): Agent {
  return new Agent({
    connect: { lookup: pinnedLookup(addresses), timeout: opts.connectTimeoutMs ?? 10_000 },
    // One request per agent: nothing is kept alive toward a caller's host.
    pipelining: 0,
  });
}

/** A pinned answer: `close()` ends its connection (call it once done with the body). */
export interface PinnedExchange {
  response: PinnedResponse;
  close: () => Promise<void>;
}

/** `fetch` pinned to checked addresses, sending no trace context or baggage. */
export async function pinnedFetch(
  url: string,
  addresses: readonly string[],
  init: PinnedRequestInit = {},
): Promise<PinnedExchange> {
  const agent = pinnedAgent(addresses);
  const close = (): Promise<void> => agent.destroy().catch(() => undefined);
  try {
    const response = await context.with(suppressTracing(ROOT_CONTEXT), () =>
      undiciFetch(url, { ...init, dispatcher: agent }),
    );
    return { response, close };
  } catch (err) {
    await close();
    throw err;
  }
}
