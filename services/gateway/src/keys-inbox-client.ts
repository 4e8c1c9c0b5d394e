/**
 * The CLI's side of the key inbox (keys-inbox.ts): finds the standalone gateway holding a data
 * directory, hands it a request and waits for its answer.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import {
  HOLDER_FILE,
  answerFile,
  ensureInbox,
  isPrivateEntry,
  keysAnswerSchema,
  keysInboxDir,
  requestFile,
  writePrivateFile,
  type KeysAnswer,
  type KeysRequest,
} from './keys-inbox';

/** How long the CLI waits for the running gateway to claim a request before withdrawing it. */
export const CLAIM_TIMEOUT_MS = 30_000;

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid of the live process holding the standalone data directory, or undefined when none does. */
export function runningHolder(dataDir: string): number | undefined {
  const file = path.join(keysInboxDir(dataDir), HOLDER_FILE);
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Thrown when no answer came: the outcome is stated in the message. */
export class InboxError extends Error {}

function readAnswer(file: string): KeysAnswer | undefined {
  if (!existsSync(file)) return undefined;
  const ok = isPrivateEntry(file, 'file');
  const text = readFileSync(file, 'utf8');
  unlinkSync(file);
  const parsed = ok ? keysAnswerSchema.safeParse(JSON.parse(text)) : undefined;
  if (!parsed?.success) throw new InboxError(`unreadable answer from the running service (${file})`);
  return parsed.data;
}

/**
 * Hands `req` to the running gateway `pid` and returns its answer. When the gateway does not claim the
 * request within `claimTimeoutMs`, the request is withdrawn (nothing was applied) and InboxError says so;
 * once claimed, it waits as long again for the answer.
 */
export async function sendKeysRequest(
  dataDir: string,
  pid: number,
  req: KeysRequest,
  claimTimeoutMs = CLAIM_TIMEOUT_MS,
): Promise<KeysAnswer> {
  const dir = ensureInbox(dataDir);
  const id = randomBytes(8).toString('hex');
  const request = path.join(dir, requestFile(id));
  const answer = path.join(dir, answerFile(id));
  writePrivateFile(request, JSON.stringify(req));
  const deadline = () => Date.now() + claimTimeoutMs;
  let until = deadline();
  let claimed = false;
  for (;;) {
    const got = readAnswer(answer);
    if (got) return got;
    if (!claimed && !existsSync(request)) {
      claimed = true; // the service renamed it: it is applying it
      until = deadline();
    }
    if (Date.now() > until) {
      if (claimed)
        throw new InboxError(
          `the standalone service (pid ${pid}) took the request but gave no answer; check with npm run keys -- list`,
        );
      if (withdraw(request))
        throw new InboxError(
          `the standalone service (pid ${pid}) holding ${dataDir} did not take the request within ` +
            `${claimTimeoutMs} ms; nothing was changed. If no service runs on this data directory, remove ` +
            `${path.join(dir, HOLDER_FILE)} and retry.`,
        );
      claimed = true; // taken at the last moment
      until = deadline();
    }
    await sleep(100);
  }
}

/** Removes a request the service has not taken; false when it was taken already. */
function withdraw(request: string): boolean {
  try {
    unlinkSync(request);
    return true;
  } catch {
    return false;
  }
}
