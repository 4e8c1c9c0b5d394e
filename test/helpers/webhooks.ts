/**
 * A stack with a webhook receiver on loopback, for the tests that register endpoints through the API (the
 * SDK's, the CLI's and the end-to-end ones): the receiver starts first, so its URL is known before any
 * registration, and the stack lets webhooks reach loopback.
 */
import { Receiver, type Answer, type Received } from '../../services/results/test/webhook-receiver';
import { startStack, type TestStack } from './stack';

/** Results settings under which a refused delivery is retried quickly and is dead after about two seconds. */
export const DEAD_IN_TWO_SECONDS: Readonly<Record<string, string>> = {
  RESULTS_WEBHOOK_POLL_MS: '50',
  RESULTS_WEBHOOK_RETRY_BASE_MS: '50',
  RESULTS_WEBHOOK_RETRY_MAX_MS: '200',
  RESULTS_WEBHOOK_RETRY_HORIZON_MS: '2000',
};

export interface WebhookStackOptions {
  /** VISION_API_KEYS value: `key:subject,...`. */
  keys: string;
  /** More environment for the stack; WEBHOOK_ALLOW_PRIVATE_NETWORKS is always true. */
  env?: Record<string, string>;
  /** How the receiver answers (its default: 204 to everything). */
  answer?: (r: Received) => Answer;
}

/**
 * Starts the receiver, then the stack (startStack: standalone or distributed as E2E_STACK says). When the stack
 * does not start, the receiver is closed again and the error thrown.
 */
export async function startWebhookStack(
  opts: WebhookStackOptions,
): Promise<{ stack: TestStack; rx: Receiver }> {
  const rx = await new Receiver().start();
  if (opts.answer) rx.answer = opts.answer;
  try {
    const stack = await startStack({
      keys: opts.keys,
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...opts.env },
    });
    return { stack, rx };
  } catch (err) {
    await rx.close();
    throw err;
  }
}

/**
 * Calls `fn` every 100 ms until it returns something other than undefined; fails after `ms`. An error thrown by
 * `fn` fails at once (test/helpers/media-server.ts's waitFor retries it instead).
 */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
