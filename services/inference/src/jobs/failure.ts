import { taskReason, type TaskReasonCode } from '@vision/shared';
import type { SourceExit } from './frame-source';
import type { Ending } from './frame-publisher';

/**
 * Which reason code an ffmpeg error line stands for. Only the code (and a status number) leaves this
 * process: the line itself may name a path, an object key, a presigned URL or a host. Pure.
 */
export function classifyDecoderError(
  line: string | undefined,
  live: boolean,
): { code: TaskReasonCode; detail?: string } {
  const l = line ?? '';
  if (/could not start|^Option \S+ not found|Unrecognized option|Error applying option/i.test(l))
    return { code: 'decoder_unavailable' };
  const status = /\b(40[134])\b/.exec(l)?.[1];
  if (status === '401' || /unauthori[sz]ed|authori[sz]ation failed/i.test(l))
    return { code: 'stream_auth_failed', detail: '401' };
  if (status === '403' || /forbidden/i.test(l)) return { code: 'stream_auth_failed', detail: '403' };
  if (status === '404' || /stream not found|no such stream|not found/i.test(l))
    return { code: live ? 'stream_not_found' : 'media_unreadable' };
  if (
    /connection refused|timed out|timeout|no route|unreachable|resolve|name or service|reset by peer|broken pipe|end of file|i\/o error/i.test(
      l,
    )
  )
    return { code: live ? 'stream_unreachable' : 'media_unreadable' };
  return { code: live ? 'stream_unreachable' : 'media_unreadable' };
}

/** The reason of a live job given up after `giveupMs`: what the last attempt ran into. */
export function gaveUpReason(
  lastError: string | undefined,
  giveupMs: number,
  everConnected: boolean,
): string {
  const { code, detail } = classifyDecoderError(lastError, true);
  if (code === 'decoder_unavailable') return taskReason(code);
  if (everConnected)
    return taskReason('stream_lost', `after ${giveupMs} ms, ${code}${detail ? ` ${detail}` : ''}`);
  return taskReason(code, `${detail ? `${detail} ` : ''}for ${giveupMs} ms`);
}

/** Consecutive decoder crashes after which a live job gives up as `decoder_unavailable` (our side: refunded). */
export const CRASH_LOOP = 3;

/** The decoder died by a signal we did not send (a crash, the OOM killer): our side, never the caller's. */
export function isDecoderCrash(exit: { signal: string | null; killed: boolean }): boolean {
  return exit.signal !== null && !exit.killed;
}

/** How a file job ended, from its one decoder run (not stopped). */
export function fileEnding(exit: SourceExit): Ending {
  if (exit.code === 0 && exit.frames > 0) return { status: 'succeeded' };
  if (exit.code === 0) return { status: 'failed', reason: taskReason('no_video_frames') };
  if (isDecoderCrash(exit)) return { status: 'failed', reason: taskReason('decoder_unavailable', 'crashed') };
  const { code, detail } = classifyDecoderError(exit.lastError, false);
  return { status: 'failed', reason: taskReason(code, detail) };
}

/**
 * After one decoder run of a live job (not stopped): the job's end, or the reason to reconnect.
 * `crashes`: consecutive crashes including this run; `finiteHttp`: an HTTP(S) file or finished (VOD)
 * playlist at the first look.
 */
export function liveAttemptEnding(
  exit: SourceExit,
  o: { crashes: number; finiteHttp: boolean; sampleFps: number },
): { ending: Ending; reason?: undefined } | { ending?: undefined; reason: string } {
  if (classifyDecoderError(exit.lastError, true).code === 'decoder_unavailable')
    return { ending: { status: 'failed', reason: taskReason('decoder_unavailable') } };
  // A decoder that keeps crashing is ours to fix, not a stream to wait for: fail (refunded) at once.
  if (o.crashes >= CRASH_LOOP)
    return {
      ending: { status: 'failed', reason: taskReason('decoder_unavailable', `crashed ${o.crashes} times`) },
    };
  // A progressive file or a finished (VOD) playlist served over HTTP(S) ends like a file once its last
  // frame was decoded (a server restarted mid-file cuts it short: that reconnects). A live playlist,
  // RTSP and RTMP never end `succeeded`, whatever ffmpeg's exit status (an FLV relay announces its
  // source's duration too; a stale playlist of a restarted HLS server ends with EXT-X-ENDLIST).
  if (o.finiteHttp && reachedEnd(exit, o.sampleFps)) return { ending: { status: 'succeeded' } };
  return { reason: exit.lastError ?? `stream ended (decoder status ${exit.code ?? exit.signal})` };
}

/** The decoder read a file (it announced a duration) to its last frames, as opposed to a cut transfer. */
function reachedEnd(exit: SourceExit, sampleFps: number): boolean {
  if (exit.code !== 0 || typeof exit.duration !== 'number' || exit.frames === 0) return false;
  const slackMs = Math.max(2000, 3000 / sampleFps);
  return !Number.isFinite(exit.lastPtsMs) || exit.lastPtsMs >= exit.duration * 1000 - slackMs;
}
