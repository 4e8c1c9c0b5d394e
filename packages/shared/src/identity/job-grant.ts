/**
 * Job grants: what lets inference publish results for a task (docs/SECURITY.md, "Bus principals"). Kafka's ACLs
 * let inference write `vision.frames`, but not say for which tasks. Tasks signs a grant with its identity key
 * when it starts a job (the task, the job, the caller's subject, the scene, an expiry); inference copies it
 * onto every message it publishes for that job; results stores a frame or an end only under a grant for that
 * very task, signed by tasks, and unexpired. A taken-over inference holds no tasks key: it can publish for the
 * tasks it was given, and for no other.
 *
 * The signature covers a domain prefix, so neither an identity header nor any other tasks signature is a
 * grant, and no grant is an identity header.
 */
import { sign, verify, type KeyObject } from 'node:crypto';
import type { IdentitySigner } from './identity';

export interface JobGrant {
  task_id: string;
  job_id: string;
  subject: string;
  scene_code: string;
  /** Issued at and expires at, ms since the epoch. */
  iat: number;
  exp: number;
}

/** How long a grant lets inference publish for its job; a job started again gets a fresh one. */
export const JOB_GRANT_TTL_MS = 30 * 86_400_000;
/** The longest grant read from a message (a real one is a few hundred characters). */
export const MAX_JOB_GRANT_LENGTH = 4096;
const DOMAIN = 'vision.job-grant.v1.';

/** Signs a grant for `job` as tasks (`signer`); it expires JOB_GRANT_TTL_MS after `now`. */
export function signJobGrant(
  signer: IdentitySigner,
  job: Omit<JobGrant, 'iat' | 'exp'>,
  now = Date.now(),
): string {
  if (signer.issuer !== 'tasks') throw new Error(`${signer.issuer} does not grant jobs: only tasks does`);
  const claims: JobGrant = { ...job, iat: now, exp: now + JOB_GRANT_TTL_MS };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(null, Buffer.from(DOMAIN + payload), signer.key).toString('base64url')}`;
}

/** Why a grant does not hold: the label of vision_results_frames_refused_total, never an API reason. */
export type GrantRefusal = 'missing' | 'malformed' | 'bad_signature' | 'other_task' | 'expired';
export type GrantCheck = { ok: true; grant: JobGrant } | { ok: false; reason: GrantRefusal };
const refuse = (reason: GrantRefusal): GrantCheck => ({ ok: false, reason });

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;

function decode(payload: string): JobGrant | undefined {
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof c !== 'object' || c === null) return undefined;
  const { task_id, job_id, subject, scene_code, iat, exp } = c as Partial<Record<keyof JobGrant, unknown>>;
  if (!isText(task_id) || !isText(job_id) || !isText(subject) || !isText(scene_code)) return undefined;
  if (typeof iat !== 'number' || typeof exp !== 'number') return undefined;
  return { task_id, job_id, subject, scene_code, iat, exp };
}

/**
 * Checks the grant a message carries for task `taskId`: signed with tasks' public key `key`, for that task, and
 * not expired at `now`. Never throws on what a message holds.
 */
export function verifyJobGrant(key: KeyObject, grant: unknown, taskId: string, now = Date.now()): GrantCheck {
  if (grant === undefined || grant === null || grant === '') return refuse('missing');
  if (typeof grant !== 'string' || grant.length > MAX_JOB_GRANT_LENGTH) return refuse('malformed');
  const dot = grant.indexOf('.');
  if (dot <= 0 || dot === grant.length - 1) return refuse('malformed');
  const payload = grant.slice(0, dot);
  const claims = decode(payload);
  if (!claims) return refuse('malformed');
  let valid: boolean;
  try {
    valid = verify(null, Buffer.from(DOMAIN + payload), key, Buffer.from(grant.slice(dot + 1), 'base64url'));
  } catch {
    valid = false;
  }
  if (!valid) return refuse('bad_signature');
  if (claims.task_id !== taskId) return refuse('other_task');
  if (claims.exp - claims.iat > JOB_GRANT_TTL_MS || now > claims.exp) return refuse('expired');
  return { ok: true, grant: claims };
}
