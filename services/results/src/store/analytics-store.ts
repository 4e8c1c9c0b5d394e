import type { Knex, RuleSet } from '@vision/shared';
import type { AnalyticsEvent, EngineSnapshot } from '../domain/analytics';
import type { FrameZones } from '../domain/frames';

/**
 * What results keeps about one task's analytics: a row of analytics_tasks, which names its rules by digest, and
 * the rule set it names (analytics_rule_sets, each set of a task stored once).
 */
export interface AnalyticsRecord {
  taskId: string;
  rulesVersion: number;
  rulesDigest: string;
  rules: RuleSet;
  /** The engine as of its last evaluated frame; null before it evaluated any. */
  snapshot: EngineSnapshot | null;
  eventsCount: number;
  rev: number;
}

interface Row {
  task_id: string;
  rules_version: number;
  rules_digest: string;
  rules: string;
  snapshot: string | null;
  events_count: string | number;
  rev: string | number;
}

const fromRow = (r: Row): AnalyticsRecord => ({
  taskId: r.task_id,
  rulesVersion: Number(r.rules_version),
  rulesDigest: r.rules_digest,
  rules: JSON.parse(r.rules) as RuleSet,
  snapshot: r.snapshot === null ? null : (JSON.parse(r.snapshot) as EngineSnapshot),
  eventsCount: Number(r.events_count),
  rev: Number(r.rev),
});

/** One step of a task's evaluation, written in one transaction. */
export interface AnalyticsStep {
  taskId: string;
  /** The rev read: the write fails (AnalyticsConflict) when another writer moved the row since. */
  rev: number;
  /** A new rules version the step starts (stored beforehand with keepRules); absent: the version stands. */
  rules?: { version: number; digest: string };
  snapshot: EngineSnapshot;
  /** The events decided, numbered from the stored count on. */
  events: AnalyticsEvent[];
  /** The evaluated frames' annotations. */
  frames: { seq: number; zones: FrameZones }[];
}

/** Another writer (a second results replica) advanced the task first: the step is dropped, its batch redelivered. */
export class AnalyticsConflict extends Error {
  constructor(taskId: string) {
    super(`analytics of task ${taskId} were advanced by another writer`);
  }
}

/**
 * The seq of the last frame a task's evaluation has seen, from its snapshot (-1 before any); undefined for a task
 * without rules. Each step also writes it in `as_of_seq` with `as_of_rev`, its rev, so that a read of results finds
 * it without the snapshot (FramesStore.readable); this is the reading for a row whose last step did not (written
 * before those columns existed, or by a release without them while a new one rolls out).
 */
export async function snapshotAsOfSeq(knex: Knex, taskId: string): Promise<number | undefined> {
  const r = (await knex('analytics_tasks').where('task_id', taskId).first('snapshot')) as
    { snapshot: string | null } | undefined;
  if (!r) return undefined;
  return r.snapshot === null ? -1 : ((JSON.parse(r.snapshot) as EngineSnapshot).as_of_seq ?? -1);
}

/** Rows per statement: well under Postgres' 65535 bind parameters. */
const CHUNK = 1000;

export class AnalyticsStore {
  constructor(private readonly knex: Knex) {}

  async get(taskId: string): Promise<AnalyticsRecord | undefined> {
    const r = (await this.knex('analytics_tasks as t')
      .join('analytics_rule_sets as s', function on() {
        this.on('s.task_id', '=', 't.task_id').andOn('s.digest', '=', 't.rules_digest');
      })
      .where('t.task_id', taskId)
      .first('t.*', 's.rules')) as Row | undefined;
    return r ? fromRow(r) : undefined;
  }

  /** Stores a rule set of the task under its digest, once (a set it holds already is left as it is). */
  async keepRules(taskId: string, digest: string, rules: RuleSet): Promise<void> {
    await this.knex('analytics_rule_sets')
      .insert({ task_id: taskId, digest, rules: JSON.stringify(rules) })
      .onConflict(['task_id', 'digest'])
      .ignore();
  }

  /** The rule set the task holds under `digest`. */
  async rulesOf(taskId: string, digest: string): Promise<RuleSet | undefined> {
    const r = (await this.knex('analytics_rule_sets').where({ task_id: taskId, digest }).first('rules')) as
      { rules: string } | undefined;
    return r ? (JSON.parse(r.rules) as RuleSet) : undefined;
  }

  /** Records a task's first known rules (stored beforehand with keepRules); false when it already had some. */
  async create(
    taskId: string,
    rulesVersion: number,
    rulesDigest: string,
    snapshot: EngineSnapshot | null,
    now: Date,
  ): Promise<boolean> {
    const inserted = (await this.knex('analytics_tasks')
      .insert({
        task_id: taskId,
        rules_version: rulesVersion,
        rules_digest: rulesDigest,
        snapshot: snapshot === null ? null : JSON.stringify(snapshot),
        as_of_seq: snapshot?.as_of_seq ?? -1,
        as_of_rev: 0,
        updated_at: now,
      })
      .onConflict('task_id')
      .ignore()
      .returning('task_id')) as unknown[];
    return inserted.length === 1;
  }

  /**
   * Writes a step: the events (numbered from `eventsCount`; an id already stored is kept once), the frames'
   * annotations, and the row (snapshot, count, rev + 1, and the rules version and digest when the step starts
   * a new one: never the rules themselves) only if its rev is still `step.rev`. `also` runs in the same
   * transaction (the webhook deliveries of the events).
   */
  async write(
    step: AnalyticsStep,
    eventsCount: number,
    now: Date,
    also: (trx: Knex) => Promise<void>,
  ): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const moved = await trx('analytics_tasks')
        .where({ task_id: step.taskId, rev: step.rev })
        .update({
          ...(step.rules ? { rules_version: step.rules.version, rules_digest: step.rules.digest } : {}),
          snapshot: JSON.stringify(step.snapshot),
          // The snapshot's progress, readable without it, and the rev it belongs to (snapshotAsOfSeq).
          as_of_seq: step.snapshot.as_of_seq ?? -1,
          as_of_rev: step.rev + 1,
          events_count: eventsCount + step.events.length,
          rev: step.rev + 1,
          updated_at: now,
        });
      if (moved !== 1) throw new AnalyticsConflict(step.taskId);
      for (let i = 0; i < step.events.length; i += CHUNK) {
        const rows = step.events.slice(i, i + CHUNK).map((e, j) => ({
          task_id: step.taskId,
          n: eventsCount + i + j,
          event_id: e.id,
          body: JSON.stringify(e),
        }));
        await trx('analytics_events').insert(rows).onConflict(['task_id', 'event_id']).ignore();
      }
      for (let i = 0; i < step.frames.length; i += CHUNK) {
        const chunk = step.frames.slice(i, i + CHUNK);
        await trx.raw(
          `UPDATE result_frames f SET zones = v.zones::jsonb
             FROM (VALUES ${chunk.map(() => '(?::integer, ?::text)').join(', ')}) AS v(seq, zones)
            WHERE f.task_id = ? AND f.seq = v.seq`,
          [...chunk.flatMap((f) => [f.seq, JSON.stringify(f.zones)]), step.taskId],
        );
      }
      await also(trx);
    });
  }

  /** Events numbered after `afterN`, in order, at most `limit`, as stored (the bytes the engine gave). */
  async eventsPage(taskId: string, afterN: number, limit: number): Promise<{ n: number; body: string }[]> {
    const rows = (await this.knex('analytics_events')
      .where('task_id', taskId)
      .andWhere('n', '>', afterN)
      .orderBy('n', 'asc')
      .limit(limit)
      .select('n', 'body')) as { n: string | number; body: string }[];
    return rows.map((r) => ({ n: Number(r.n), body: r.body }));
  }

  /** Forgets a task's analytics (retention). */
  async deleteTask(taskId: string): Promise<void> {
    await this.knex('analytics_events').where({ task_id: taskId }).delete();
    await this.knex('analytics_tasks').where({ task_id: taskId }).delete();
    await this.knex('analytics_rule_sets').where({ task_id: taskId }).delete();
  }
}
