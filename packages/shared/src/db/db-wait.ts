import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { Logger } from '../telemetry/logger';

/** How long a distributed service waits, at start, for its Postgres to accept a connection (openDb). */
export const DB_START_WAIT_MS = 60_000;

/**
 * Why a connection could not be had that says nothing about the settings: the server is not up or not
 * reachable yet, is starting or shutting down, has no connection slot free, or took longer than the pool's
 * acquire timeout (a loaded or restarting server). A wrong password, database or schema is not among them.
 */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // A Service's name that does not resolve yet (the database's Service created after this pod).
  'ENOTFOUND',
  'EPIPE',
  // cannot_connect_now (starting up, shutting down, in recovery), too_many_connections, admin_shutdown.
  '57P03',
  '53300',
  '57P01',
]);

/** The code or name that says why a connection failed (never its message, which may name the host). */
function connectFailure(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown };
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.name === 'string') return e.name;
  return 'unknown';
}

/** True when a failure to reach the database may pass by itself (TRANSIENT_CODES, or the pool's acquire timeout). */
function isTransientConnectError(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && TRANSIENT_CODES.has(e.code)) return true;
  if (e?.name === 'KnexTimeoutError') return true;
  // pg's own words when the server closes the socket during the handshake.
  return typeof e?.message === 'string' && /^Connection terminated/.test(e.message);
}

export interface WaitForDatabaseOptions {
  logger?: Logger;
  /** How long to keep trying from the first attempt; DB_START_WAIT_MS unless set. */
  budgetMs?: number;
  /** The first pause between attempts, doubled after each up to 5 s. */
  firstPauseMs?: number;
}

/**
 * Waits until the database answers `select 1`, trying again on a transient failure (isTransientConnectError)
 * until `budgetMs` has passed, each retry logged with why (its code, never the URL). A failure that is not
 * transient, or the last one once the budget is spent, is thrown as it is.
 */
export async function waitForDatabase(knex: Knex, opts: WaitForDatabaseOptions = {}): Promise<void> {
  const budgetMs = opts.budgetMs ?? DB_START_WAIT_MS;
  const deadline = Date.now() + budgetMs;
  let pause = opts.firstPauseMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      await knex.raw('select 1');
      if (attempt > 1) opts.logger?.info({ attempt }, 'database reachable');
      return;
    } catch (err) {
      if (!isTransientConnectError(err) || Date.now() + pause > deadline) throw err;
      opts.logger?.warn(
        { attempt, reason: connectFailure(err), retryInMs: pause, budgetMs },
        'database not reachable yet; trying again',
      );
      await sleep(pause);
      pause = Math.min(pause * 2, 5000);
    }
  }
}
