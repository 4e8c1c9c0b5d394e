import { Command } from 'commander';
import type { QuotaKind } from '@vision/sdk';
import { clientFor, json, out } from '../context';

export function scenesCommand(): Command {
  return new Command('scenes')
    .description('list the scenes; enabled ones are valid --scene values')
    .option('--json', 'print the scene list as JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const scenes = await clientFor(cmd).scenes();
      if (opts.json) return out(json(scenes));
      for (const s of scenes) {
        const state = s.enabled ? 'enabled ' : 'disabled';
        const why = !s.enabled && s.reason ? ` (${s.reason})` : '';
        await out(`${s.scene_code.padEnd(16)} ${state} ${s.name}${why}; labels: ${s.labels.join(', ')}`);
      }
    });
}

export function quotaCommand(): Command {
  const line = (name: string, q: QuotaKind) =>
    `${name.padEnd(12)} ${q.used} used, ${q.held ?? 0} held, ${q.remaining} of ${q.limit} left; resets ${q.resets_at}`;
  return new Command('quota')
    .description("today's quota of this key's subject")
    .option('--json', 'print the quota as JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const quota = await clientFor(cmd).quota();
      if (opts.json) return out(json(quota));
      await out(line('video tasks', quota.video_tasks));
      await out(line('images', quota.images));
    });
}
