import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DirectoryObjectStore,
  InProcessBus,
  TOPICS,
  createLogger,
  type Bus,
  type DetectedObject,
  type Subscription,
} from '@vision/shared';
import { createInference, loadInferenceConfig, type InferenceParts } from '../../src/index';
import { FenceWalk } from '../../../results/src/domain/job-fence';
import { identityDir } from '../../../../test/helpers/identity';

export const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../../../shared');
export const MODELS_DIR = path.join(SHARED_DIR, 'models');
export const IMAGES_DIR = path.join(SHARED_DIR, 'media/images');
export const VIDEOS_DIR = path.join(SHARED_DIR, 'media/videos');

export const image = (name: string): Buffer => readFileSync(path.join(IMAGES_DIR, name));

export interface FrameMsg {
  schema: 1;
  type: 'frame';
  event_id: string;
  task_id: string;
  seq: number;
  frame_id: string;
  frame_time_ms: number;
  image: { width: number; height: number };
  objects: Required<DetectedObject>[];
  lower_bound: number;
  grant?: string;
  /** The epoch of the run that published it (a job taken from the lease store). */
  epoch?: number;
}
export interface EndMsg {
  schema: 1;
  type: 'end';
  event_id: string;
  task_id: string;
  seq: number;
  frames: number;
  status: string;
  reason?: string;
  grant?: string;
  epoch?: number;
}
export type Msg = FrameMsg | EndMsg;

/** Subscribes to vision.frames and records every message per task id (keys checked). */
export class FrameCollector {
  readonly byTask = new Map<string, Msg[]>();
  readonly keyMismatches: string[] = [];
  private sub?: Subscription;

  static async on(bus: Bus): Promise<FrameCollector> {
    const c = new FrameCollector();
    c.sub = await bus.subscribe({
      topic: TOPICS.frames,
      group: `test-${Math.random().toString(36).slice(2)}`,
      fromBeginning: true,
      handleBatch: async (msgs) => {
        for (const m of msgs) {
          const v = m.value as Msg;
          if (m.key !== v.task_id) c.keyMismatches.push(m.key);
          const list = c.byTask.get(v.task_id) ?? [];
          list.push(v);
          c.byTask.set(v.task_id, list);
        }
      },
    });
    return c;
  }

  messages(task: string): Msg[] {
    return this.byTask.get(task) ?? [];
  }

  frames(task: string): FrameMsg[] {
    return this.messages(task).filter((m): m is FrameMsg => m.type === 'frame');
  }

  /** The epochs of a task's runs, in the order their owners announced them. */
  owners(task: string): number[] {
    return this.messages(task)
      .filter((m) => (m as { type: string }).type === 'owner')
      .map((m) => (m as unknown as { epoch: number }).epoch);
  }

  /** The frames results keeps of a task: its messages walked in order through the fence, the first of each seq. */
  kept(task: string): Map<number, FrameMsg> {
    const walk = new FenceWalk(new Map());
    const out = new Map<number, FrameMsg>();
    for (const m of this.messages(task)) {
      if (!walk.admit(task, m.epoch) || m.type !== 'frame') continue;
      if (!out.has(m.seq)) out.set(m.seq, m);
    }
    return out;
  }

  async waitFor(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async waitForEnd(task: string, timeoutMs = 60_000): Promise<EndMsg> {
    await this.waitFor(() => this.messages(task).some((m) => m.type === 'end'), timeoutMs, `end of ${task}`);
    return this.messages(task).find((m) => m.type === 'end') as EndMsg;
  }

  async close(): Promise<void> {
    await this.sub?.close();
  }
}

export interface TestInference {
  parts: InferenceParts;
  bus: InProcessBus;
  store: DirectoryObjectStore;
  collector: FrameCollector;
  close(): Promise<void>;
}

/** The service wired over the real standalone adapters (in-process bus, directory object store). */
export async function startTestInference(
  env: Record<string, string> = {},
  opts: { resolve?: (host: string) => Promise<string[]> } = {},
): Promise<TestInference> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'inference-test-'));
  const cfg = loadInferenceConfig({
    VISION_MODELS_DIR: MODELS_DIR,
    VISION_IDENTITY_DIR: identityDir(),
    VISION_DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const logger = createLogger('inference', { level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const bus = new InProcessBus({ logger });
  const store = new DirectoryObjectStore(path.join(dir, 'objects'));
  const parts = await createInference({ cfg, bus, objectStore: store, logger, resolve: opts.resolve });
  const collector = await FrameCollector.on(bus);
  return {
    parts,
    bus,
    store,
    collector,
    close: async () => {
      await parts.close();
      await collector.close();
      await bus.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
