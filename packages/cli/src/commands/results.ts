import { Command, Option } from 'commander';
import type { Frame } from '@vision/sdk';
import { clientFor, numberIn, out } from '../context';

type Format = 'jsonl' | 'csv' | 'json';

const CSV_HEADER = 'frame_id,frame_time_ms,image_width,image_height,label,score,cx,cy,width,height,track_id';
const csvCell = (v: unknown) => {
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** CSV rows of a frame: one per object, or one with empty object columns (every frame appears). */
function csvRows(f: Frame): string[] {
  const head = [f.frame_id, f.frame_time_ms, f.image.width, f.image.height];
  if (f.objects.length === 0) return [[...head, '', '', '', '', '', '', ''].map(csvCell).join(',')];
  return f.objects.map((o) =>
    [...head, o.label, o.score, o.bbox.cx, o.bbox.cy, o.bbox.width, o.bbox.height, o.track_id]
      .map(csvCell)
      .join(','),
  );
}

export function resultsCommand(): Command {
  return new Command('results')
    .description('print every result frame of a task, page after page, as it arrives')
    .argument('<task_id>')
    .option('--min-score <x>', 'lower bound of confidence, 0 to 1', numberIn('--min-score', 0, 1))
    .addOption(
      new Option('--format <format>', 'jsonl: a frame per line; csv: a row per object; json: one array')
        .choices(['jsonl', 'csv', 'json'])
        .default('jsonl'),
    )
    .option(
      '--follow',
      'receive frames over the live stream (Server-Sent Events), reconnecting, until the task ends',
    )
    .option('--no-follow', 'stop at the newest stored frame instead of waiting for a running task to end')
    .option('--page-size <n>', 'frames per request', numberIn('--page-size', 1, 500, true), 500)
    .action(
      async (
        id: string,
        opts: { minScore?: number; format: Format; follow?: boolean; pageSize: number },
        cmd: Command,
      ) => {
        const client = clientFor(cmd);
        // json: each frame is printed when the next arrives, so that the last one gets no comma.
        let pending: string | undefined;
        if (opts.format === 'csv') await out(CSV_HEADER);
        if (opts.format === 'json') await out('[');
        // Without either flag a running task is polled page by page until it ends.
        const frames =
          opts.follow === true
            ? client.followResults(id, { minScore: opts.minScore })
            : client.results(id, {
                minScore: opts.minScore,
                follow: opts.follow !== false,
                limit: opts.pageSize,
              });
        for await (const frame of frames) {
          if (opts.format === 'jsonl') await out(JSON.stringify(frame));
          else if (opts.format === 'csv') for (const row of csvRows(frame)) await out(row);
          else {
            if (pending !== undefined) await out(`${pending},`);
            pending = `  ${JSON.stringify(frame)}`;
          }
        }
        if (opts.format === 'json') {
          if (pending !== undefined) await out(pending);
          await out(']');
        }
      },
    );
}
