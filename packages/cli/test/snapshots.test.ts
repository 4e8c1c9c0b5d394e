/**
 * `vision events --snapshots DIR` against a scripted service on loopback: each event's picture saved as
 * DIR/<event id>.jpg, the reason printed for an event without one, JSON lines kept clean, a saved picture not read
 * again, and the usage errors. (Against the real stack: places.test.ts.)
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runVision } from './support/vision-process';

const TASK = '7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b';
const KEY = 'cli-snapshots-key-0123456789';
const id = (n: number) => `${'0'.repeat(31)}${n}`;
const base = (n: number) => ({
  id: id(n),
  kind: 'line.crossed',
  task_id: TASK,
  rule_id: 'curb',
  rule_version: 1,
  seq: 10 * n,
  media_ms: 1000 * n,
  track_id: String(n),
  label: 'person',
  direction: 'in',
});
const withPicture = (n: number) => ({
  ...base(n),
  has_snapshot: true,
  snapshot_path: `/v1/vision/tasks/${TASK}/events/${id(n)}/snapshot`,
});
/** 1 and 4 have pictures; 2 has none (frame_gone); 3 says it has one, but the service has none any more. */
const EVENTS = [
  withPicture(1),
  { ...base(2), has_snapshot: false, snapshot_reason: 'frame_gone' },
  withPicture(3),
  withPicture(4),
];
const picture = (n: number, crop: boolean) =>
  Buffer.from(`\xff\xd8 picture ${n}${crop ? ' crop' : ''} \xff\xd9`);

describe('vision events --snapshots', () => {
  let server: Server;
  let url = '';
  let tmp: string;
  const reads: string[] = [];
  const vision = (args: string[]) => runVision(args, { VISION_BASE_URL: url, VISION_API_KEY: KEY });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (req.headers.authorization !== `Bearer ${KEY}`) {
        res.writeHead(401).end();
        return;
      }
      if (u.pathname === `/v1/vision/tasks/${TASK}/events`) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ items: EVENTS, next_cursor: '' }));
        return;
      }
      const m = /^\/v1\/vision\/tasks\/[^/]+\/events\/0+(\d)\/snapshot$/.exec(u.pathname);
      if (m) {
        reads.push(`${m[1]}${u.search}`);
        if (m[1] === '3') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              error: {
                code: 'OP-TASK-NO-SNAPSHOT',
                message: 'the event has no picture',
                request_id: 'r-3',
                details: { snapshot_reason: 'capture_failed' },
              },
            }),
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.end(picture(Number(m[1]), u.searchParams.get('crop') === 'true'));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'OP-NOT-FOUND', message: 'no such thing', request_id: 'r' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    tmp = mkdtempSync(path.join(os.tmpdir(), 'vision-cli-snapshots-'));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(tmp, { recursive: true, force: true });
  });

  it("saves each event's picture as DIR/<event id>.jpg and prints the reason for those without", async () => {
    const dir = path.join(tmp, 'new', 'dir');
    const r = await vision(['events', '--task', TASK, '--snapshots', dir]);
    expect([r.code, r.stderr]).toEqual([0, `vision: 2 snapshots in ${dir}; 2 events without one\n`]);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^#10 {2}1000ms {2}line\.crossed .* {2}snapshot .*0001\.jpg$/);
    expect(lines[0]).toContain(`snapshot ${path.join(dir, `${id(1)}.jpg`)}`);
    expect(lines[1]).toMatch(/no snapshot \(frame_gone\)$/);
    expect(lines[2]).toMatch(/no snapshot \(capture_failed\)$/);
    expect(readdirSync(dir).sort()).toEqual([`${id(1)}.jpg`, `${id(4)}.jpg`]);
    expect(readFileSync(path.join(dir, `${id(4)}.jpg`))).toEqual(picture(4, false));
    // Events without a picture are not asked for; one that says it has one is.
    expect(reads).toEqual(['1', '3', '4']);
  });

  it('with --json prints the events alone on stdout, the reasons on stderr; saved pictures are not read again', async () => {
    const dir = path.join(tmp, 'json');
    reads.length = 0;
    const first = await vision(['events', TASK, '--json', '--snapshots', dir, '--crop']);
    expect(first.code).toBe(0);
    expect(
      first.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(EVENTS);
    expect(first.stderr.split('\n')).toEqual([
      `vision: event ${id(2)}: no snapshot (frame_gone)`,
      `vision: event ${id(3)}: no snapshot (capture_failed)`,
      `vision: 2 snapshots in ${dir}; 2 events without one`,
      '',
    ]);
    expect(reads).toEqual(['1?crop=true', '3?crop=true', '4?crop=true']);
    expect(readFileSync(path.join(dir, `${id(1)}.jpg`))).toEqual(picture(1, true));
    // Again: the pictures there are kept, and only the one still missing is asked for.
    reads.length = 0;
    const again = await vision(['events', TASK, '--json', '--snapshots', dir, '--crop']);
    expect(again.stdout).toBe(first.stdout);
    expect(again.stderr).toContain(`2 snapshots in ${dir} (2 already there); 2 events without one`);
    expect(reads).toEqual(['3?crop=true']);
    expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('without --snapshots prints the events as before and reads no picture', async () => {
    reads.length = 0;
    const r = await vision(['events', TASK]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('snapshot');
    expect(r.stdout.trim().split('\n')).toHaveLength(4);
    expect(reads).toEqual([]);
  });

  it('two different tasks, no task, or --crop alone are usage errors (2) and save nothing', async () => {
    const dir = path.join(tmp, 'usage');
    for (const args of [
      ['events', TASK, '--task', 'other', '--snapshots', dir],
      ['events', '--snapshots', dir],
      ['events', TASK, '--crop'],
    ]) {
      const r = await vision(args);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), 2]);
    }
    expect(existsSync(dir)).toBe(false);
    // The same task twice is one task.
    expect((await vision(['events', TASK, '--task', TASK])).code).toBe(0);
  });
});
