import type { RawDetection, RgbImage } from '../detection-types';

/** The interface of the built-in classical fire/smoke detector (src/fire/). */
export interface FireVideoDetector {
  push(img: RgbImage, timeMs: number): RawDetection[];
}
export interface FireModule {
  detectFireSmokeImage(img: RgbImage): RawDetection[];
  FireSmokeVideoDetector: new (opts?: Record<string, unknown>) => FireVideoDetector;
  /** The detector's calibrated lower bound, used when the catalogue sets none. */
  BUILTIN_FIRE_SMOKE_LOWER_BOUND?: number;
}

export type FireModuleLoad = { ok: true; module: FireModule } | { ok: false; reason: string };

/**
 * Loads the built-in fire detector at run time, so that the service still starts (with fire_smoke
 * disabled) when the module is absent or broken.
 */
export function loadFireModule(): FireModuleLoad {
  let mod: Partial<FireModule>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    mod = require('../fire') as Partial<FireModule>;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND' && /['"]\.\.\/fire['"]/.test(String((err as Error).message)))
      return { ok: false, reason: 'built-in fire detector not available' };
    return { ok: false, reason: `built-in fire detector failed to load: ${(err as Error).message}` };
  }
  if (typeof mod.detectFireSmokeImage !== 'function' || typeof mod.FireSmokeVideoDetector !== 'function')
    return { ok: false, reason: 'built-in fire detector not available' };
  return { ok: true, module: mod as FireModule };
}
