import { VisionNetworkError } from './errors';

export interface RetryOptions {
  /** Retries after the first attempt (default 4). 0 turns retrying off. */
  retries?: number;
  /** First backoff delay in ms (default 300), doubled after each attempt, with jitter. */
  minDelayMs?: number;
  /** Largest backoff delay in ms (default 8,000). */
  maxDelayMs?: number;
  /** Largest `Retry-After` honoured, in ms (default 60,000); a longer one is answered without retrying. */
  maxRetryAfterMs?: number;
}

export interface AttemptOptions {
  /** Time limit of one attempt in ms (no limit when undefined). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * False when the request body cannot be sent twice (a caller's stream): the request is then tried
   * once only.
   */
  replayable?: boolean;
}

export type FetchLike = (input: Request) => Promise<Response>;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** `Retry-After` in ms (delta-seconds or an HTTP date), undefined when absent or unreadable. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Whether an answer is worth sending again (with the same Idempotency-Key): 5xx and rate limiting. */
async function retriable(res: Response): Promise<boolean> {
  if (res.status >= 500 && res.status !== 501) return true;
  if (res.status !== 429) return false;
  // A daily quota that is used up does not come back by waiting a few seconds.
  const body = (await res
    .clone()
    .json()
    .catch(() => null)) as { error?: { code?: string } } | null;
  return body?.error?.code !== 'OP-QUOTA-DAILY-EXHAUSTED';
}

/**
 * Sends a request, retrying network errors, time-outs, 5xx and 429 (after `Retry-After`) with
 * exponential backoff. `make` builds a fresh Request for each attempt, so every attempt carries the
 * same headers (the Idempotency-Key of a create above all). The last answer is returned as it is;
 * when no attempt got an answer, VisionNetworkError is thrown.
 */
export async function sendWithRetries(
  fetchImpl: FetchLike,
  make: (signal: AbortSignal | undefined) => Request,
  policy: RetryOptions,
  opts: AttemptOptions = {},
): Promise<Response> {
  const retries = opts.replayable === false ? 0 : (policy.retries ?? 4);
  const minDelay = policy.minDelayMs ?? 300;
  const maxDelay = policy.maxDelayMs ?? 8000;
  const maxRetryAfter = policy.maxRetryAfterMs ?? 60_000;
  for (let attempt = 0; ; attempt++) {
    const backoff = Math.min(maxDelay, minDelay * 2 ** attempt) * (0.75 + Math.random() * 0.5);
    const timeout = opts.timeoutMs !== undefined ? AbortSignal.timeout(opts.timeoutMs) : undefined;
    const signals = [timeout, opts.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    let res: Response;
    try {
      res = await fetchImpl(make(signal));
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (attempt >= retries) {
        const what = timeout?.aborted ? 'did not answer in time' : 'could not be reached';
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        const detail = cause?.code ?? cause?.message ?? (err as Error).message;
        throw new VisionNetworkError(
          `The service ${what} after ${attempt + 1} attempt(s)${detail ? ` (${detail})` : ''}`,
          attempt + 1,
          { cause: err },
        );
      }
      await sleep(backoff, opts.signal);
      continue;
    }
    if (attempt >= retries || !(await retriable(res))) return res;
    const asked = retryAfterMs(res.headers);
    if (asked !== undefined && asked > maxRetryAfter) return res;
    await res.body?.cancel().catch(() => undefined);
    await sleep(Math.max(asked ?? 0, backoff), opts.signal);
  }
}
