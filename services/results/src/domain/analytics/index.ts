/**
 * Analytics of places: zones, lines, dwell and occupancy over a task's result frames (docs/ANALYTICS.md).
 *
 *   const parsed = parseRules({ zones, lines });           // @vision/shared; 400 when !parsed.ok
 *   const engine = AnalyticsEngine.create(taskId, parsed.rules);
 *   const out = engine.processFrame(analyticsFrameOf(storedFrame)); // events, objects' zones, zone counts
 *   engine.replaceRules(nextRules);                         // PUT rules: a new rules version
 *   engine.analytics();                                     // the summary
 *   AnalyticsEngine.restore(engine.snapshot(), engine.rules); // checkpoint and resume
 *   countImageZones(rules.zones, detections);               // one image, no time
 */
export { AnalyticsEngine } from './engine';
export type { AnalyticsSummary, EngineSnapshot, FrameAnalytics } from './engine';
export { eventId } from './events';
export type { AnalyticsEvent, AnalyticsEventKind, EndReason } from './events';
export { analyticsFrameOf } from './frame-input';
export type { AnalyticsFrame, AnalyticsObject, EngineGeometry } from './frame-input';
export type { LineSummary, ZoneSummary } from './rule-runtime';
