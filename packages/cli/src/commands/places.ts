/**
 * Zones and lines of video tasks (docs/ANALYTICS.md): `rules get|set`, `analytics`, `events`, and the rules file
 * that `task create --rules` and `detect --zones` read.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Analytics, AnalyticsEvent, RuleSetInput, TaskRules, ZoneInput } from '@vision/sdk';
import { clientFor, json, numberIn, out } from '../context';
import { UsageError } from '../exit-codes';
import { snapshotSaver, type SnapshotOutcome } from '../snapshots';

/**
 * A rules file: a JSON object `{ "zones": [...], "lines": [...] }` (either may be left out). Only its shape is
 * checked here; the service validates the rules themselves.
 */
export function readRulesFile(file: string): RuleSetInput {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code) throw err;
    throw new UsageError(`${file} is not JSON: ${e.message ?? String(err)}`);
  }
  const set = value as { zones?: unknown; lines?: unknown } | null;
  if (!set || typeof set !== 'object' || Array.isArray(set))
    throw new UsageError(`${file} must hold a JSON object { "zones": [...], "lines": [...] }`);
  for (const k of ['zones', 'lines'] as const)
    if (set[k] !== undefined && !Array.isArray(set[k]))
      throw new UsageError(`${file}: "${k}" must be an array`);
  return set as RuleSetInput;
}

/** The zones of a rules file (detect takes zones only: lines need time). */
export function readZonesFile(file: string): ZoneInput[] {
  const set = readRulesFile(file);
  if (set.lines?.length) throw new UsageError(`${file}: image detections take zones only, not lines`);
  return set.zones ?? [];
}

const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ') || '-';

function rulesLines(r: TaskRules): string[] {
  return [
    `task ${r.task_id}  rules version ${r.rules_version}`,
    ...r.zones.map(
      (z) => `zone ${z.id} (${z.name ?? z.id})  ${z.polygon.length} vertices  anchor ${z.anchor}`,
    ),
    ...r.lines.map(
      (l) => `line ${l.id} (${l.name ?? l.id})  [${l.start.join(', ')}] -> [${l.end.join(', ')}]`,
    ),
  ];
}

function analyticsLines(a: Analytics): string[] {
  const head = `task ${a.task_id}  rules version ${a.rules_version}  as of frame ${a.as_of_seq ?? '-'}`;
  return [
    head,
    ...a.rules.map((r) =>
      r.kind === 'line'
        ? `line ${r.id}  in ${r.in_total} (${counts(r.in)})  out ${r.out_total} (${counts(r.out)})`
        : `zone ${r.id}  occupancy ${counts(r.occupancy)}  visits ${r.visits.total} (${r.visits.open} open)` +
          `  dwell p50 ${r.dwell_ms.p50 ?? '-'} p95 ${r.dwell_ms.p95 ?? '-'} max ${r.dwell_ms.max ?? '-'} ms`,
    ),
  ];
}

const eventLine = (e: AnalyticsEvent) =>
  [
    `#${e.seq}`,
    `${e.media_ms}ms`,
    e.kind.padEnd(23),
    e.rule_id,
    e.label ?? '',
    e.track_id !== undefined ? `track ${e.track_id}` : '',
    e.direction ?? '',
    e.dwell_ms !== undefined ? `dwell ${e.dwell_ms}ms` : '',
    e.count !== undefined ? `count ${e.count}` : '',
  ]
    .filter(Boolean)
    .join('  ');

export function rulesCommand(): Command {
  const rules = new Command('rules').description("read or replace a video task's zones and lines");
  rules.addCommand(
    new Command('get')
      .description('show the rules in force and their version')
      .argument('<task_id>')
      .option('--json', 'print the rules as JSON')
      .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
        const r = await clientFor(cmd).places.getRules(id);
        await out(opts.json ? json(r) : rulesLines(r).join('\n'));
      }),
  );
  rules.addCommand(
    new Command('set')
      .description(
        'replace the rules with those of FILE while the task runs (a new rules version; no restart)',
      )
      .argument('<task_id>')
      .argument('<file>', 'JSON file: { "zones": [...], "lines": [...] }')
      .option('--json', 'print the rules in force after the change as JSON')
      .action(async (id: string, file: string, opts: { json?: boolean }, cmd: Command) => {
        const set = readRulesFile(file);
        const r = await clientFor(cmd).places.replaceRules(id, set);
        await out(opts.json ? json(r) : rulesLines(r).join('\n'));
      }),
  );
  return rules;
}

export function analyticsCommand(): Command {
  return new Command('analytics')
    .description("a video task's counts per zone and line: in and out, occupancy, visits and dwell")
    .argument('<task_id>')
    .option('--json', 'print the analytics as JSON')
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
      const a = await clientFor(cmd).places.analytics(id);
      await out(opts.json ? json(a) : analyticsLines(a).join('\n'));
    });
}

const snapshotNote = (s: SnapshotOutcome) => (s.file ? `snapshot ${s.file}` : `no snapshot (${s.reason})`);

interface EventsOptions {
  task?: string;
  follow?: boolean;
  json?: boolean;
  pageSize: number;
  snapshots?: string;
  crop?: boolean;
}

export function eventsCommand(): Command {
  return new Command('events')
    .description("print a video task's zone and line events, in the order they were decided")
    .argument('[task_id]', 'the task (or --task)')
    .option('--task <task_id>', 'the task')
    .option(
      '--follow',
      'receive events over the live stream (Server-Sent Events), reconnecting, until the task ends',
    )
    .option('--no-follow', 'stop at the newest stored event instead of waiting for a running task to end')
    .option('--json', 'print JSON lines, one event per line')
    .option('--page-size <n>', 'events per request', numberIn('--page-size', 1, 500, true), 500)
    .option(
      '--snapshots <dir>',
      "save each event's picture as DIR/<event id>.jpg (an event without one: its reason is printed)",
    )
    .option('--crop', "with --snapshots: save the crop of the event's object instead of the whole frame")
    .action(async (arg: string | undefined, opts: EventsOptions, cmd: Command) => {
      if (arg !== undefined && opts.task !== undefined && arg !== opts.task)
        throw new UsageError(`two tasks given: ${arg} and --task ${opts.task}`);
      const id = arg ?? opts.task;
      if (id === undefined) throw new UsageError('no task: give its id (or --task ID)');
      if (opts.crop && opts.snapshots === undefined) throw new UsageError('--crop goes with --snapshots DIR');
      const places = clientFor(cmd).places;
      const saver =
        opts.snapshots !== undefined ? snapshotSaver(places, opts.snapshots, opts.crop === true) : undefined;
      // Without either flag a running task is polled page by page until it ends.
      const events =
        opts.follow === true
          ? places.followEvents(id)
          : places.events(id, { follow: opts.follow !== false, limit: opts.pageSize });
      for await (const e of events) {
        const saved = await saver?.save(e);
        // JSON lines stay the events themselves: where a picture is missing, stderr says why.
        if (opts.json) {
          await out(JSON.stringify(e));
          if (saved?.reason) process.stderr.write(`vision: event ${e.id}: ${snapshotNote(saved)}\n`);
        } else await out(saved ? `${eventLine(e)}  ${snapshotNote(saved)}` : eventLine(e));
      }
      if (saver) process.stderr.write(`vision: ${saver.summary()}\n`);
    });
}
