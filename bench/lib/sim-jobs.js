'use strict';
/* global performance */
/**
 * The scheduling bench's stand-in for a replica's running jobs (the `LocalJobs` port of
 * services/inference/src/ownership/port.ts): a job "runs" by sitting in a map from the moment it is started, its
 * checkpoint advancing with time at `fps` frames a second from the checkpoint it was taken with. No decoder, no
 * model: what the ownership code does with the jobs is all that is measured.
 *
 * A live job (a stream source) carries `lastTimeMs` in its checkpoint, as the real ones do, so that a replica
 * handing jobs over picks the live ones first.
 */
class SimJobs {
  /**
   * @param {object} o
   * @param {number} [o.fps] frames a second every job advances by
   * @param {(jobId: string) => void} [o.onStart] called at every start (a take, a placement here)
   */
  constructor({ fps = 10, onStart } = {}) {
    this.fps = fps;
    this.onStart = onStart;
    /** jobId -> { record, fromSeq, published, startedAt, live, onEnd } */
    this.jobs = new Map();
    this.starts = 0;
    this.fenced = 0;
    this.handedOver = 0;
  }

  async run(record, onEnd) {
    const cp = record.checkpoint;
    this.jobs.set(record.jobId, {
      record,
      fromSeq: cp?.nextSeq ?? 0,
      published: cp?.published ?? 0,
      startedAt: performance.now(),
      live: record.request.source?.type === 'stream',
      onEnd,
    });
    this.starts++;
    this.onStart?.(record.jobId);
  }

  runningIds() {
    return [...this.jobs.keys()];
  }

  checkpoint(jobId) {
    const j = this.jobs.get(jobId);
    if (!j) return undefined;
    const n = Math.floor(((performance.now() - j.startedAt) * this.fps) / 1000);
    return {
      nextSeq: j.fromSeq + n,
      published: j.published + n,
      dropped: 0,
      reconnects: 0,
      ...(j.live && { lastTimeMs: Date.now() }),
    };
  }

  /** A live job offered here (make-before-break): its "stream" is up at once, there being no decoder. */
  async warm(record) {
    return record.request.source?.type === 'stream';
  }

  unwarm() {}

  isLive(jobId) {
    return this.jobs.get(jobId)?.live === true;
  }

  /** A planned stop: the job leaves this replica at once, with where to go on. */
  async handOver(jobId) {
    const cp = this.checkpoint(jobId);
    this.jobs.delete(jobId);
    if (cp) this.handedOver++;
    return cp;
  }

  fence(jobId) {
    if (this.jobs.delete(jobId)) this.fenced++;
  }

  stop(jobId) {
    const j = this.jobs.get(jobId);
    if (!j) return;
    const checkpoint = this.checkpoint(jobId);
    this.jobs.delete(jobId);
    j.onEnd({ jobId, status: 'stopped', checkpoint });
  }
}

/**
 * The fewest jobs that must move for `loads` (jobs per replica, every replica that takes jobs, new ones at 0)
 * to reach a spread of at most one: the `total mod n` shares of one more go to the replicas holding the most,
 * and every job above a replica's share moves once. Capacity is not a bound here (the bench leaves room).
 */
function idealMoves(loads) {
  const sorted = [...loads].sort((a, b) => b - a);
  const total = sorted.reduce((a, b) => a + b, 0);
  const base = Math.floor(total / sorted.length);
  const extra = total % sorted.length;
  return sorted.reduce((n, jobs, i) => n + Math.max(0, jobs - (base + (i < extra ? 1 : 0))), 0);
}

/** The kind of an ownership statement, from its SQL (the lease store's statements, lease-store.ts). */
function statementKind(sql) {
  const s = sql.replace(/\s+/g, ' ').trim().toLowerCase();
  if (s.startsWith('insert into replicas')) return 'beat (lease)';
  if (s.startsWith('select r.replica_id')) return 'beat (loads)';
  if (s.startsWith('update jobs j set checkpoint')) return 'beat (checkpoints)';
  if (s.startsWith('with handed as') || s.startsWith('update jobs set owner')) return 'take';
  if (s.startsWith('insert into jobs')) return 'insert';
  if (s.startsWith('update "jobs" set "owner"')) return 'release';
  if (s.startsWith('update "jobs" set "status"')) return 'finish';
  return 'other';
}

module.exports = { SimJobs, idealMoves, statementKind };
