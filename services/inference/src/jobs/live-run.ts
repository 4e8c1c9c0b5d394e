/**
 * The connections of a live job (docs/INTERNAL.md, "Sources"): the host checked before each, reconnects with
 * exponential backoff, the end after INFERENCE_STREAM_GIVEUP_MS without frames, and a finite HTTP(S) source's
 * success after its last frame.
 */
import { metrics, redactText, taskReason, type PinnedRelay } from '@vision/shared';
import { isFiniteHttp, type SourceKind } from '../net/playlist';
import { gaveUpReason, isDecoderCrash, liveAttemptEnding } from './failure';
import type { Ending } from './frame-publisher';
import type { SourceExit } from './frame-source';
import type { JobRuntimeOptions, JobSpec, ResolvedInput } from './job-types';
import { checkLiveSource, startRelayFor } from './live-connect';
import type { WarmStart } from './warm-start';

/** Where one decoder run of a live job reads. */
export interface LiveTarget {
  /** The checked final address of an http(s) stream after its redirects, or the pinned relay's. */
  streamInput?: string;
  /** An HTTP(S) stream that is a file (it announced its length), not a playlist: read at its native rate. */
  nativePace: boolean;
}

/** What the loop needs of its job. */
export interface LiveJob {
  input: ResolvedInput;
  spec: JobSpec;
  rt: JobRuntimeOptions;
  /** Stopped, handed over or fenced: no connection is made any more. */
  halted(): boolean;
  /** Frames published by this run so far. */
  published(): number;
  reconnecting(): void;
  runOnce(target: LiveTarget): Promise<SourceExit>;
  sleep(ms: number): Promise<void>;
  decoderFailed(exit: SourceExit): void;
  /** A stream started while the previous owner still ran the job: the first connection is this one. */
  warm?: WarmStart;
}

export async function runLive(job: LiveJob): Promise<Ending> {
  const { input, rt, spec } = job;
  let lostSince = Date.now();
  let everConnected = false;
  let delay = rt.reconnectMinMs;
  let crashes = 0;
  /** HTTP(S): what the URL served at the first look (net/playlist.ts); only `file` and `vod` can succeed. */
  let sourceKind: SourceKind | undefined;
  for (let attempt = 0; ; attempt++) {
    if (job.halted()) return { status: 'stopped' };
    if (attempt > 0) {
      job.reconnecting();
      metrics.decoderRestarts.inc({ reason: 'stream_lost' });
    }
    let exit: SourceExit | undefined;
    let reason: string | undefined;
    let pinned: string | undefined;
    const warm = attempt === 0 && job.warm?.alive ? job.warm : undefined;
    const target: LiveTarget = { nativePace: false };
    const check = warm ? warm.check : await checkLiveSource(input, rt, sourceKind);
    if (check.kind === 'refused') return { status: 'failed', reason: taskReason('stream_refused') };
    if (check.kind === 'unreachable') reason = check.reason;
    else {
      pinned = check.pinned;
      if (check.http) {
        target.streamInput = check.http.url;
        target.nativePace = check.http.nativePace;
        // Decided once: a playlist that was live stays live (a restarted server may serve a stale
        // playlist that ends with EXT-X-ENDLIST; that is the server gone, not the end of the stream).
        sourceKind ??= check.http.sourceKind;
      }
    }
    if (!reason) {
      const before = job.published();
      const relay = warm ? warm.relay : await pinnedRelay(input, pinned, target);
      if (warm) Object.assign(target, warm.target);
      try {
        exit = await job.runOnce(target);
      } finally {
        await relay?.close();
      }
      if (relay?.refused()) return { status: 'failed', reason: taskReason('stream_refused') };
      if (job.halted()) return { status: 'stopped' };
      if (job.published() > before || exit.frames > 0) {
        lostSince = Date.now();
        everConnected = true;
        delay = rt.reconnectMinMs;
      }
      crashes = isDecoderCrash(exit) ? crashes + 1 : 0;
      const ending = liveAttemptEnding(exit, {
        crashes,
        finiteHttp: isFiniteHttp(input.kind, sourceKind),
        sampleFps: spec.sampleFps,
      });
      if (ending.ending?.status === 'failed' || crashes > 0) job.decoderFailed(exit);
      if (ending.ending) return ending.ending;
      reason = ending.reason;
    }
    const gone = Date.now() - lostSince;
    if (gone >= rt.giveupMs) {
      rt.logger.warn({ job_id: spec.jobId, reason }, 'stream given up');
      return { status: 'failed', reason: gaveUpReason(reason, rt.giveupMs, everConnected) };
    }
    rt.logger.warn(
      { job_id: spec.jobId, reason, retry_in_ms: delay, url: redactText(input.input) },
      'stream lost, reconnecting',
    );
    await job.sleep(Math.min(delay, Math.max(0, rt.giveupMs - gone)));
    delay = Math.min(delay * 2, rt.reconnectMaxMs);
  }
}

/** RTSP and RTMP connect through a relay pinned to the checked address (live-connect.ts). */
async function pinnedRelay(
  input: ResolvedInput,
  address: string | undefined,
  target: LiveTarget,
): Promise<PinnedRelay | undefined> {
  const pinned = await startRelayFor(input, address);
  if (pinned) target.streamInput = pinned.streamInput;
  return pinned?.relay;
}
