/** A result frame as the results pages serve it, and what two runs of one file are compared on. */
export interface ResultFrame {
  frame_id: string;
  frame_time_ms: number;
  objects: { label: string; score: number; bbox: unknown; track_id?: string }[];
}

/** A frame's seq: the last part of its id (`<task>:<seq>`). */
export const seqOf = (f: ResultFrame): number => Number(f.frame_id.split(':').pop());

/** What must equal between a moved file task and an uninterrupted run: seq, time, detections and track ids. */
export const frameContent = (f: ResultFrame) => ({ seq: seqOf(f), t: f.frame_time_ms, objects: f.objects });
