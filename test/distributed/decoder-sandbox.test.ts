import { execFileSync } from 'node:child_process';
import type { ServiceName } from '../../scripts/distributed/launcher';
import type { DistributedStack } from '../helpers/distributed';
import { CONTAINERS, describeContainers, startFaultStack } from './support';

/**
 * What a decoder child can reach inside a service container. The service's own spawn path runs a stand-in for
 * ffmpeg (sh) that tries to read the service's identity keys, /proc/<parent>/environ, cmdline and fd, and
 * /proc/1 (the service itself), and prints one letter per target on its stdout: R (read) or D (denied).
 * A positive control (ffmpeg's own binary, which a decoder must load) has to read R, so a stand-in that could
 * not run at all does not pass.
 */
const PROBE = String.raw`
const fs = require('fs');
const path = require('path');
const dir = process.env.VISION_IDENTITY_DIR;
const keys = fs.readdirSync(dir).map((f) => path.join(dir, f)).filter((p) => fs.statSync(p).isFile());
const secrets = Object.keys(process.env).filter((k) => /SECRET|PASSWORD|TOKEN|DATABASE_URL/.test(k));
const me = process.pid;
const targets = ['/usr/bin/ffmpeg', ...keys, '/proc/' + me + '/environ', '/proc/' + me + '/cmdline',
  '/proc/1/environ', '/proc/1/cmdline'];
const standIn = 'for p in "$@"; do if cat "$p" >/dev/null 2>&1; then printf R; else printf D; fi; done;' +
  ' if ls /proc/$PPID/fd >/dev/null 2>&1; then printf R; else printf D; fi;' +
  " if env | grep -qE '^(" + secrets.join('|') + ")='; then printf R; else printf D; fi;" +
  " printf '[Parsed_showinfo_1 @ 0x1] n:0 pts:0 pts_time:0 pos:0 fmt:gbrp s:1x1\\n' >&2";
const names = [...targets, '/proc/<parent>/fd', 'own environment'];
const args = ['-c', standIn, 'sh', ...targets];
const report = (verdict, exit) => {
  console.log(JSON.stringify({ secrets: secrets.length, keys: keys.length,
    read: names.filter((_, i) => verdict[i] === 'R'), verdict, exit }));
};
if (process.argv[1] === 'inference') {
  const { FfmpegFrameSource } = require('/app/services/inference/dist/jobs/frame-source.js');
  let verdict = '';
  const source = new FfmpegFrameSource({ ffmpegPath: 'sh', args, frameBytes: names.length,
    onFrame: (f) => { verdict = f.planes.toString('latin1'); } });
  source.done.then((exit) => report(verdict, exit.lastError ?? exit.code));
} else {
  const { decoderCommand, decoderEnv } = require('/app/packages/shared/dist/index.js');
  const cmd = decoderCommand('sh', args);
  const r = require('child_process').spawnSync(cmd.file, cmd.args, { env: decoderEnv(), encoding: 'latin1' });
  report(r.stdout, r.stderr || r.status);
}
`;

interface Reach {
  secrets: number;
  keys: number;
  read: string[];
  verdict: string;
  exit: unknown;
}

if (!CONTAINERS)
  describe('decoder children in the service image (not run here)', () => {
    test.skip('needs VISION_DEPLOYMENT_RUNTIME=container bash scripts/test-distributed.sh test/distributed/decoder-sandbox.test.ts', () =>
      undefined);
  });

describeContainers('a decoder child in a service container reaches none of the service’s secrets', () => {
  let stack: DistributedStack;
  beforeAll(async () => {
    stack = await startFaultStack();
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
  });

  /** Runs PROBE with node inside the running container of `service` (its environment, user and mounts). */
  function reach(service: ServiceName, spawnPath: string): Reach {
    const d = stack.deployment;
    const name = d.containers!.name(d.label(d.proc(service)));
    const out = execFileSync('podman', ['exec', name, 'node', '-e', PROBE, spawnPath], { encoding: 'utf8' });
    return JSON.parse(out.trim().split('\n').pop() as string) as Reach;
  }

  it.each([
    ['inference', 'inference'],
    ['tasks', 'tasks'],
  ] as [ServiceName, string][])(
    '%s: the decoder stand-in reads its own binary, but no identity key, no /proc of the service, no service environment',
    (service, spawnPath) => {
      const r = reach(service, spawnPath);
      // The stand-in ran and wrote its verdict on stdout, and the service holds what it must not leak.
      expect(r.verdict).toHaveLength(r.keys + 7);
      expect(r.secrets).toBeGreaterThan(0);
      if (service === 'tasks') expect(r.keys).toBeGreaterThan(0);
      expect(r.read).toEqual(['/usr/bin/ffmpeg']);
    },
  );
});
