/**
 * A submitted job checked before it runs anywhere (docs/INTERNAL.md, "Errors vs outcomes"): the decoder works, the
 * scene serves, the source resolves: an object to a path or a presigned URL, a stream's host to an address the
 * policy allows. What fails is a `rejected` submission with the reason.
 */
import { isSceneCode, SCENE_CODES, taskReason, type ObjectStore, type SceneCode } from '@vision/shared';
import type { SceneCatalogue } from '../catalogue/catalogue';
import { checkStreamHost, parseStreamUrl, type Resolver } from '../net/stream-url';
import type { JobRecord } from '../ownership/port';
import type { DecoderCheck } from './decoder-preflight';
import { MAX_FIRST_SEQ, type JobRequest } from './job-request';
import type { InputKind, JobSpec, ResolvedInput } from './job-types';

export type Prepared = { ok: true; input: ResolvedInput } | { ok: false; reason: string };

export interface AdmissionDeps {
  catalogue: SceneCatalogue;
  objectStore: ObjectStore;
  allowPrivateNetworks: boolean;
  resolve?: Resolver;
  decoder?: DecoderCheck;
}

export async function prepareJob(req: JobRequest, o: AdmissionDeps): Promise<Prepared> {
  if (o.decoder && !o.decoder.ok) return { ok: false, reason: taskReason('decoder_unavailable') };
  if (!isSceneCode(req.scene_code))
    return { ok: false, reason: `unknown scene_code (one of ${SCENE_CODES.join(', ')})` };
  if (!o.catalogue.engine(req.scene_code)) {
    const st = o.catalogue.status(req.scene_code);
    return { ok: false, reason: `scene ${req.scene_code} is disabled${st?.reason ? `: ${st.reason}` : ''}` };
  }
  return resolveSource(o, req.source);
}

/** Where ffmpeg reads a job's source from. */
export async function resolveSource(o: AdmissionDeps, source: JobRequest['source']): Promise<Prepared> {
  if (source.type === 'object') {
    let info;
    try {
      info = await o.objectStore.stat(source.key);
    } catch {
      return { ok: false, reason: 'object key is not valid or the store is unreachable' };
    }
    if (!info) return { ok: false, reason: 'object not found' };
    const loc = await o.objectStore.locate(source.key);
    const kind: InputKind = loc.startsWith('https://')
      ? 'https'
      : loc.startsWith('http://')
        ? 'http'
        : 'file';
    return { ok: true, input: { kind, input: loc, live: false } };
  }
  const parsed = parseStreamInput(source.url);
  if (!parsed.ok) return parsed;
  const check = await checkStreamHost(parsed.input.host ?? '', {
    allowPrivate: o.allowPrivateNetworks,
    resolve: o.resolve,
  });
  if (!check.ok) return check;
  return parsed;
}

/** A live source's input from its URL (its host is checked when it connects: live-connect.ts). */
export function parseStreamInput(url: string): Prepared {
  const parsed = parseStreamUrl(url);
  if (!parsed.ok) return parsed;
  return { ok: true, input: { kind: parsed.scheme, input: url, live: true, host: parsed.url.hostname } };
}

/** The spec of a job's run on this replica, taken at `epoch`. */
export function specOf(req: JobRequest, defaultSampleFps: number, epoch: number): JobSpec {
  return {
    jobId: req.job_id,
    sceneCode: req.scene_code as SceneCode,
    source: req.source,
    sampleFps: req.sample_fps ?? defaultSampleFps,
    firstSeq: req.first_seq ?? 0,
    epoch,
    ...(req.grant && { grant: req.grant }),
  };
}

/**
 * The spec of a job's run from its record in the lease store (ownership/): at its epoch, from its checkpoint when an
 * earlier owner left one. A live job taken over from an owner that died goes past the seqs that owner may have
 * published after its last checkpoint (one a frame interval from the checkpoint's time until `now`, and one more);
 * a file's frames after the checkpoint are decoded again with the same seqs (the same frames); a handover's
 * checkpoint is exact. A checkpoint without a time (none is written now) skips nothing, and no skip passes the
 * last first seq a request may carry (the seq column is a 32-bit integer).
 */
export function runSpec(record: JobRecord, defaultSampleFps: number, now = Date.now()): JobSpec {
  const req = record.request;
  const resume = record.checkpoint;
  const spec: JobSpec = { ...specOf(req, defaultSampleFps, record.epoch), ...(resume && { resume }) };
  if (!resume) return spec;
  const since =
    resume.final || req.source.type !== 'stream' || !resume.lastTimeMs
      ? 0
      : Math.max(0, Math.ceil(((now - resume.lastTimeMs) * spec.sampleFps) / 1000)) + 1;
  spec.firstSeq = Math.min(resume.nextSeq + since, Math.max(resume.nextSeq, MAX_FIRST_SEQ));
  return spec;
}
