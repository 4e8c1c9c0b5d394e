import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ServiceName } from '../../scripts/distributed/launcher';
import type { DistributedStack } from '../helpers/distributed';
import {
  client,
  clip,
  CONTAINERS,
  describeContainers,
  expectChargesMatchTasks,
  expectSucceededWithEveryFrameOnce,
  startFaultStack,
  waitFor,
} from './support';
import { fetchNamed } from '../helpers/api-call';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const CLIP = clip('vehicles_parkinglot_topdown_intel.mp4'); // 30 s
const SERVICES: ServiceName[] = ['gateway', 'tasks', 'quota', 'results', 'images', 'inference'];

/** podman's answer (stdout and stderr together), also when it fails. */
function podman(args: string[]): { ok: boolean; out: string } {
  try {
    return { ok: true, out: execFileSync('podman', args, { encoding: 'utf8', stdio: 'pipe' }) };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

if (!CONTAINERS)
  describe('the services as containers of the service image (not run here)', () => {
    test.skip('needs VISION_DEPLOYMENT_RUNTIME=container bash scripts/test-distributed.sh test/distributed/containers.test.ts', () =>
      undefined);
  });

describeContainers('the six services as containers of the service image', () => {
  let stack: DistributedStack;
  beforeAll(async () => {
    stack = await startFaultStack({
      env: {
        TASKS_RECOVER_AFTER_MS: '1000',
        TASKS_RECONCILE_INTERVAL_MS: '500',
        TASKS_POLL_INTERVAL_MS: '300',
      },
    });
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('runs each service from the image, as user 1000, on a read-only root filesystem', async () => {
    const d = stack.deployment;
    expect(d.runtime).toBe('container');
    const containers = d.containers!;
    for (const name of SERVICES) {
      const p = d.proc(name);
      const info = await containers.inspect(p);
      expect(info.ImageName).toBe(containers.image);
      expect(info.Config.User).toBe('1000:1000');
      expect(info.HostConfig.ReadonlyRootfs).toBe(true);
      expect(info.HostConfig.NetworkMode).toBe('host');
      expect(info.HostConfig.RestartPolicy.Name).toBe('on-failure');
      expect(info.Config.Cmd).toContain(`services/${name}/dist/main.js`);
      expect(info.State.Running).toBe(true);
      // The replica's process is the container's, as the host sees it, and runs as uid 1000.
      expect(p.child?.pid).toBe(info.State.Pid);
      expect(readFileSync(`/proc/${info.State.Pid}/status`, 'utf8')).toMatch(/^Uid:\s+1000\s/m);
      expect(existsSync(path.join(d.logDir, `${d.label(p)}.log`))).toBe(true);
    }
    const write = podman(['exec', containers.name('gateway'), 'touch', '/app/written']);
    expect(write.ok).toBe(false);
    expect(write.out).toMatch(/read-only file system/i);
  });

  /** The frame times of the clip run without a fault (the first call runs it, charged once). */
  let reference: number[] | undefined;
  async function expectedFrames(c: ReturnType<typeof client>): Promise<number[]> {
    if (reference) return reference;
    const ref = await c.upload(CLIP);
    expect(ref.status).toBe(201);
    expect((await c.waitForStatus(ref.body.task_id, ['succeeded', 'failed'], 240_000)).status).toBe(
      'succeeded',
    );
    reference = (await c.allFrames(ref.body.task_id, 500)).map((f) => f.frame_time_ms);
    expect(reference.length).toBeGreaterThan(20);
    return reference;
  }

  /** Uploads the clip and waits for its first stored frames: a fault after this lands mid-run. */
  async function uploadUntilFrames(c: ReturnType<typeof client>): Promise<string> {
    const created = await c.upload(CLIP);
    expect(created.status).toBe(201);
    const id = created.body.task_id as string;
    await waitFor('the first frames', async () => {
      const r = await c.api('GET', `/v1/vision/tasks/${id}/results?limit=500`);
      return r.body.items.length > 0 ? true : undefined;
    });
    return id;
  }

  it('a crashed tasks container is restarted by podman; the running task ends with every frame once, charged once', async () => {
    const c = client(stack);
    const expected = await expectedFrames(c);
    const used = (await c.quota()).used;

    const id = await uploadUntilFrames(c);
    const tasks = stack.deployment.proc('tasks');
    const { port, url } = tasks;
    const during = await c.task(id);
    expect(during.body.status).toBe('running'); // the crash lands mid-run
    // SIGKILL of the container's main process from the host: podman's restart policy starts it again.
    const { before, after } = await stack.deployment.crash('tasks');
    expect(after.restarts).toBe(before.restarts + 1);
    expect(after.pid).not.toBe(before.pid);
    expect((await stack.deployment.containers!.inspect(tasks)).State.Running).toBe(true);
    expect(tasks.port).toBe(port);
    // On a connection of its own, as the test client's calls (helpers/distributed.ts): a pooled one may be closed.
    const ready = await fetchNamed('GET /readyz of tasks', `${url}/readyz`, {
      headers: { connection: 'close' },
    });
    expect(ready.status).toBe(200);

    await expectSucceededWithEveryFrameOnce(c, id, expected);
    expect((await c.quota()).used).toBe(used + 1);
    await expectChargesMatchTasks(c);
  }, 600_000);

  it('a crashed inference container is restarted by podman; the job it lost starts again, and the task ends with every frame once, charged once', async () => {
    const c = client(stack);
    const expected = await expectedFrames(c);
    const used = (await c.quota()).used;
    const id = await uploadUntilFrames(c);
    expect((await c.task(id)).body.status).toBe('running'); // the crash lands mid-run
    const inference = stack.deployment.proc('inference');
    const { before, after } = await stack.deployment.crash('inference');
    expect(after.restarts).toBe(before.restarts + 1);
    expect((await stack.deployment.containers!.inspect(inference)).State.Running).toBe(true);
    // The restarted backend does not know the job: tasks starts it again from the file's first frame, and results
    // keeps each frame once.
    await expectSucceededWithEveryFrameOnce(c, id, expected);
    expect((await c.quota()).used).toBe(used + 1);
    await expectChargesMatchTasks(c);
  }, 600_000);

  it('leaves no container behind once closed', async () => {
    const id = stack.deployment.id;
    await stack.close();
    const left = podman(['ps', '-a', '--format', '{{.Names}}', '--filter', `name=${id}`]);
    expect(left.ok).toBe(true);
    expect(left.out.trim()).toBe('');
  }, 120_000);
});
