import type { Visit } from './dwell-stats';

/** What a zone keeps of one track it follows (zone-visits.ts), and what an id switch reads of it (id-switch.ts). */
export interface TrackState {
  label: string;
  inside: boolean;
  /** Media time of the first observation of the current run on the other side of `inside`. */
  pending_since: number | null;
  last_seen_ms: number;
  /** Normalized: the switch distance is measured on the frame that compares. */
  last_anchor: [number, number];
  visit: Visit | null;
}
