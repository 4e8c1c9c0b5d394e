import { Command, Option } from 'commander';
import { TASK_STATUSES, type SceneCode, type Task, type VisionClient } from '@vision/sdk';
import { clientFor, json, numberIn, out } from '../context';
import { TaskOutcomeError, UsageError } from '../exit-codes';
import { createProgress } from '../progress';
import { readRulesFile } from './places';

const taskLine = (t: Task) =>
  `${t.task_id}  ${t.status.padEnd(10)} ${(t.kind ?? '').padEnd(5)} ${t.scene_code.padEnd(14)} ${t.created_at}` +
  (t.reason ? `  (${t.reason})` : '');

const printTask = (t: Task, asJson?: boolean) =>
  out(
    asJson
      ? json(t)
      : [
          `task_id            ${t.task_id}`,
          `status             ${t.status}${t.reason ? ` (${t.reason})` : ''}`,
          `scene_code         ${t.scene_code}`,
          ...(t.kind ? [`kind               ${t.kind}`] : []),
          `request_id         ${t.request_id}`,
          `created_at         ${t.created_at}`,
          `updated_at         ${t.updated_at}`,
          `result_expires_at  ${t.result_expires_at}`,
        ].join('\n'),
  );

/** Waits with a spinner (or status lines) until the task ends; exit 4 unless it succeeded. */
async function waitAndReport(client: VisionClient, taskId: string, timeoutSec: number, asJson?: boolean) {
  const progress = createProgress();
  let task: Task;
  try {
    task = await client.waitForTask(taskId, {
      timeoutMs: timeoutSec * 1000,
      onPoll: (t) => progress.status(t),
    });
  } finally {
    progress.done();
  }
  await printTask(task, asJson);
  if (task.status !== 'succeeded')
    throw new TaskOutcomeError(
      `task ${task.task_id} ended ${task.status}${task.reason ? ` (${task.reason})` : ''}`,
    );
}

interface CreateOptions {
  file?: string;
  url?: string;
  scene: string;
  wait?: boolean;
  json?: boolean;
  idempotencyKey?: string;
  timeout: number;
  rules?: string;
}

function createCommand(): Command {
  return new Command('create')
    .description('create a video task from a file (MP4, MOV) or a stream URL (http, https, rtsp, rtmp)')
    .addOption(new Option('--file <path>', 'video file to upload').conflicts('url'))
    .addOption(new Option('--url <url>', 'live stream address').conflicts('file'))
    .requiredOption('--scene <scene>', 'scene code (see `vision scenes`)')
    .option(
      '--rules <file>',
      'zones and lines: a JSON file { "zones": [...], "lines": [...] } (docs/ANALYTICS.md)',
    )
    .option('--wait', 'wait until the task ends (spinner on a terminal, status lines otherwise)')
    .option(
      '--timeout <seconds>',
      'with --wait: give up after this long',
      numberIn('--timeout', 1, 86_400),
      3600,
    )
    .option('--idempotency-key <uuid>', 'send this Idempotency-Key (default: a new one, reused on retries)')
    .option('--json', 'print the task as JSON')
    .action(async (opts: CreateOptions, cmd: Command) => {
      if (!opts.file === !opts.url) throw new UsageError('give exactly one of --file or --url');
      const client = clientFor(cmd);
      const scene = opts.scene as SceneCode;
      const rules = opts.rules ? readRulesFile(opts.rules) : {};
      const keyOpt = { idempotencyKey: opts.idempotencyKey };
      let created;
      if (opts.file) {
        const progress = createProgress();
        try {
          created = await client.createFileTask(
            { file: opts.file, scene, ...rules },
            { ...keyOpt, onUploadProgress: (p) => progress.upload(p) },
          );
        } finally {
          progress.uploadDone();
        }
      } else {
        created = await client.createStreamTask({ streamUrl: String(opts.url), scene, ...rules }, keyOpt);
      }
      if (created.httpStatus === 202)
        process.stderr.write('submission outcome unknown: the service is confirming it (resolving)\n');
      if (created.replayed)
        process.stderr.write('replay of an earlier create with this key: not charged again\n');
      if (!opts.wait) return printTask(created.task, opts.json);
      await waitAndReport(client, created.task.task_id, opts.timeout, opts.json);
    });
}

export function taskCommand(): Command {
  const task = new Command('task').description('create, query, stop or wait for one task');
  task.addCommand(createCommand());
  task.addCommand(
    new Command('get')
      .description('show a task')
      .argument('<task_id>')
      .option('--json', 'print the task as JSON')
      .action(async (id: string, opts: { json?: boolean }, cmd: Command) =>
        printTask(await clientFor(cmd).getTask(id), opts.json),
      ),
  );
  task.addCommand(
    new Command('stop')
      .description('stop a running task (prints its status after the stop: stopping or stopped)')
      .argument('<task_id>')
      .option('--json', 'print the task as JSON')
      .action(async (id: string, opts: { json?: boolean }, cmd: Command) =>
        printTask(await clientFor(cmd).stopTask(id), opts.json),
      ),
  );
  task.addCommand(
    new Command('wait')
      .description('wait until a task ends (exit 4 unless it succeeded)')
      .argument('<task_id>')
      .option('--timeout <seconds>', 'give up after this long', numberIn('--timeout', 1, 86_400), 3600)
      .option('--json', 'print the task as JSON')
      .action(async (id: string, opts: { json?: boolean; timeout: number }, cmd: Command) =>
        waitAndReport(clientFor(cmd), id, opts.timeout, opts.json),
      ),
  );
  return task;
}

export function tasksCommand(): Command {
  return new Command('tasks')
    .description("list this key's tasks, newest first")
    .addOption(new Option('--status <status>', 'only tasks in this status').choices(TASK_STATUSES))
    .addOption(new Option('--kind <kind>', 'only video tasks or image calls').choices(['video', 'image']))
    .option('--limit <n>', 'at most this many tasks', numberIn('--limit', 1, 1_000_000, true))
    .option('--json', 'print JSON lines, one task per line')
    .action(
      async (
        opts: { status?: Task['status']; kind?: 'video' | 'image'; limit?: number; json?: boolean },
        cmd: Command,
      ) => {
        const client = clientFor(cmd);
        let n = 0;
        for await (const t of client.tasks({
          status: opts.status as (typeof TASK_STATUSES)[number] | undefined,
          kind: opts.kind,
        })) {
          await out(opts.json ? JSON.stringify(t) : taskLine(t));
          if (opts.limit !== undefined && ++n >= opts.limit) break;
        }
      },
    );
}
