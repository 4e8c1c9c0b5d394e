import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardBody } from './multipart';
import { type AdmissionQueue, type Turn, deadlineExceeded } from '../admission/admission-queue';
import { deadlineOf } from '../admission/deadline';
import { LOAD_HEADER, formatLoadReport } from '../admission/load-report';

/** Why a call stopped: its caller went away before the answer. */
export class CallerGone extends Error {
  constructor() {
    super('the caller went away before the answer');
    this.name = 'CallerGone';
  }
}

/**
 * A signal that aborts when the call's work should stop: its caller went away (the response closed
 * before it finished; reason CallerGone), or its deadline passed (reason deadlineExceeded()).
 */
export function callSignal(
  res: { once(event: 'close', listener: () => void): unknown; writableFinished: boolean },
  deadline: number | undefined,
  what: string,
  now: () => number = Date.now,
): AbortSignal {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  if (deadline !== undefined) {
    timer = setTimeout(() => ac.abort(deadlineExceeded(what)), Math.max(0, deadline - now()));
    timer.unref();
  }
  res.once('close', () => {
    clearTimeout(timer);
    if (!res.writableFinished) ac.abort(new CallerGone());
  });
  return ac.signal;
}

/**
 * Runs `work` for an HTTP request in its turn of `queue`: the turn is taken before the request's body is
 * read, so a refused request's body is discarded (up to `discardBound` bytes), never held; `work` gets
 * the caller's deadline (DEADLINE_HEADER) and a signal that aborts when the caller goes or the deadline
 * passes; the turn is given back however `work` ends.
 */
export async function inTurn<T>(
  queue: AdmissionQueue,
  req: IncomingMessage,
  res: ServerResponse,
  subject: string,
  discardBound: number,
  work: (control: { signal: AbortSignal; deadline?: number }) => Promise<T>,
): Promise<T> {
  const deadline = deadlineOf(req.headers);
  const signal = callSignal(res, deadline, queue.what);
  // The gateway decides the next calls at the door from this (never passed on to the client).
  if (!res.headersSent) res.setHeader(LOAD_HEADER, formatLoadReport(queue.report()));
  let turn: Turn;
  try {
    turn = await queue.enter(subject, { deadline, signal });
  } catch (err) {
    throw discardBody(req, discardBound, err as Error);
  }
  try {
    return await work({ signal, deadline });
  } finally {
    turn.release();
  }
}
