import type { SceneStatus } from '@vision/shared';
import type { OnnxModel } from '../../src/model/onnx-model';
import { BuiltinFireEngine, ModelSceneEngine, type SceneEngine } from '../../src/scenes/engines';
import type { FireModule } from '../../src/scenes/fire-loader';

const status = (code: string): SceneStatus =>
  ({ scene_code: code, enabled: true, engine: 'test', labels: [], lower_bound: 0.3 }) as SceneStatus;

/** Only what videoSession reads: the sessions of the model (nothing is detected here). */
const model = (sessions: number) =>
  ({ concurrency: sessions, labels: ['person'], inputSize: 416 }) as unknown as OnnxModel;

describe('frames a job keeps in detection (VideoSceneSession.depth)', () => {
  it('a model scene: two per session for a file, one per session for a live source', () => {
    for (const sessions of [1, 2, 3]) {
      const engine = new ModelSceneEngine('person_vehicle', status('person_vehicle'), model(sessions), {
        person: 'person',
      });
      expect(engine.videoSession({ live: false }).depth).toBe(2 * sessions);
      expect(engine.videoSession({ live: true }).depth).toBe(sessions);
    }
  });

  it('a scene that keeps state from frame to frame: one, file or live', () => {
    const fire = { FireSmokeVideoDetector: class {} } as unknown as FireModule;
    // Seen as a job sees it: through the engine interface, which passes the source kind.
    const engine: SceneEngine = new BuiltinFireEngine('fire_smoke', status('fire_smoke'), fire, 416);
    expect(engine.videoSession({ live: false }).depth).toBe(1);
    expect(engine.videoSession({ live: true }).depth).toBe(1);
  });
});
