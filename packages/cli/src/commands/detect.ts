import path from 'node:path';
import { Command } from 'commander';
import type { SceneCode } from '@vision/sdk';
import { drawDetections } from '../draw';
import { clientFor, json, out } from '../context';
import { UsageError } from '../exit-codes';
import { readZonesFile } from './places';

interface DetectOptions {
  scene?: string;
  json?: boolean;
  draw?: string;
  zones?: string;
}

export function detectCommand(): Command {
  return new Command('detect')
    .description('detect objects in 1 to 10 images (JPG, PNG, WEBP)')
    .argument('<images...>', 'image files')
    .option('--scene <scene>', 'scene code (the service default is fire_smoke)')
    .option('--json', 'print the service answer as JSON')
    .option('--zones <file>', 'count per zone: a JSON file { "zones": [...] } (docs/ANALYTICS.md)')
    .option('--draw <dir>', 'write copies of the images into DIR with the boxes and labels drawn')
    .action(async (images: string[], opts: DetectOptions, cmd: Command) => {
      if (images.length > 10) throw new UsageError(`at most 10 images per call, got ${images.length}`);
      const client = clientFor(cmd);
      const zones = opts.zones ? readZonesFile(opts.zones) : undefined;
      const answer = await client.detectImages(images, { scene: opts.scene as SceneCode | undefined, zones });
      const names = new Set<string>();
      const drawn: string[] = [];
      for (const r of answer.results) {
        const file = images[r.seq];
        if (opts.draw && r.status === 'succeeded' && file) {
          let name = path.basename(file);
          if (names.has(name)) name = `${r.seq}-${name}`;
          names.add(name);
          drawn.push(await drawDetections(file, r.objects ?? [], opts.draw, name));
        }
      }
      if (opts.json) {
        for (const file of drawn) process.stderr.write(`drew ${file}\n`);
        return out(json(answer));
      }
      await out(`task ${answer.task_id}${answer.replayed ? ' (replayed)' : ''}`);
      for (const r of answer.results) {
        const file = images[r.seq] ?? `#${r.seq}`;
        if (r.status !== 'succeeded') {
          await out(`${file}: failed ${r.error_code ?? ''}`);
          continue;
        }
        const objects = r.objects ?? [];
        await out(`${file}: ${objects.length} object(s)`);
        for (const z of r.zones ?? [])
          await out(
            `  zone ${z.zone_id}: ${Object.entries(z.counts)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}${z.coverage ? ` coverage ${z.coverage.fraction.toFixed(3)}` : ''}`,
          );
        for (const o of objects) {
          const b = o.bbox;
          await out(
            `  ${o.label} ${o.score.toFixed(3)} cx=${b.cx.toFixed(3)} cy=${b.cy.toFixed(3)} w=${b.width.toFixed(3)} h=${b.height.toFixed(3)}`,
          );
        }
      }
      for (const file of drawn) await out(`drew ${file}`);
    });
}
