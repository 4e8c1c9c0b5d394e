import type { AnalyticsEngine } from '../../src/domain/analytics';
import { parseRules, type Box, type RuleSet, type RuleSetInput } from '@vision/shared';
import type {
  AnalyticsEvent,
  AnalyticsFrame,
  AnalyticsObject,
  FrameAnalytics,
} from '../../src/domain/analytics';

/** Validated rules, or the test fails with the refusal. */
export function rules(input: RuleSetInput): RuleSet {
  const r = parseRules(input);
  if (!r.ok) throw new Error(r.error.message);
  return r.rules;
}

/** A box whose bottom-center anchor is (x, y). */
export function footAt(x: number, y: number, w = 0.04, h = 0.1): Box {
  return [x - w / 2, y - h, x + w / 2, y];
}

export function obj(track: string | undefined, box: Box, label = 'person', score = 0.9): AnalyticsObject {
  return track === undefined ? { label, score, box } : { label, score, box, track_id: track };
}

/**
 * A square frame of 1024 x 1024 pixels: on it the rules decide as on normalized coordinates, to the last bit
 * (scaling by a power of two is exact), so the cases that are not about the image's shape use it.
 */
export const SQUARE_FRAME = { width: 1024, height: 1024 } as const;

/**
 * Frames at 100 ms steps from seq 0 (seq i at i * 100 ms) unless the frame says otherwise, of `size` pixels
 * (the square frame unless said).
 */
export function frames(
  perFrame: AnalyticsObject[][],
  stepMs = 100,
  firstSeq = 0,
  size: { width: number; height: number } = SQUARE_FRAME,
): AnalyticsFrame[] {
  return perFrame.map((objects, i) => ({
    seq: firstSeq + i,
    time_ms: (firstSeq + i) * stepMs,
    ...size,
    objects,
  }));
}

export function run(engine: AnalyticsEngine, input: readonly AnalyticsFrame[]): FrameAnalytics[] {
  return input.map((f) => engine.processFrame(f));
}

export const eventsOf = (outs: readonly FrameAnalytics[]): AnalyticsEvent[] => outs.flatMap((o) => o.events);

/** kind@seq[/track][/direction] — a compact view of a run's events. */
export const brief = (events: readonly AnalyticsEvent[]): string[] =>
  events.map((e) =>
    [
      `${e.kind}@${e.seq}`,
      e.track_id,
      e.direction,
      e.reason,
      e.dwell_ms !== undefined ? `dwell=${e.dwell_ms}` : undefined,
    ]
      .filter((p) => p !== undefined)
      .join('/'),
  );

/** The square zone x, y in [0.4, 0.6]. */
export const SQUARE: [number, number][] = [
  [0.4, 0.4],
  [0.6, 0.4],
  [0.6, 0.6],
  [0.4, 0.6],
];
