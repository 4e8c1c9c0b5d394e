/**
 * The places the end-to-end, SDK, CLI and console tests watch on the parking-lot clip: the lot's left lane (the
 * car in the clip drives up and to the left through it) and a line it crosses inwards, drawn upwards so that its
 * left side on the image (the "in" side) is to the left.
 */
import path from 'node:path';
import { MEDIA, type ApiResponse } from './stack';

export const PARKING_LOT = path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4');

export const LEFT_LANE = {
  id: 'lane',
  labels: ['car', 'truck'],
  polygon: [
    [0, 0.3],
    [0.3, 0.3],
    [0.3, 0.7],
    [0, 0.7],
  ] as [number, number][],
};

export const CURB = {
  id: 'curb',
  start: [0.2, 0.7] as [number, number],
  end: [0.2, 0.3] as [number, number],
  labels: ['car'],
};

/** The whole frame, watched for people: every person in the frame is in it. */
export const FLOOR = {
  id: 'floor',
  polygon: [
    [0, 0],
    [1, 0],
    [1, 1],
    [0, 1],
  ] as [number, number][],
  labels: ['person'],
};

export { heaviestRules } from './heaviest-rules';

/**
 * Every event of a task stored so far, page after page of `limit` events, and whether that is all there will be
 * (`next_cursor` is empty once the task has ended and every event was returned).
 */
export async function taskEvents<E>(
  api: (method: string, urlPath: string) => Promise<ApiResponse>,
  taskId: string,
  limit = 500,
): Promise<{ items: E[]; ended: boolean }> {
  const items: E[] = [];
  let cursor = '';
  for (;;) {
    const r = await api(
      'GET',
      `/v1/vision/tasks/${taskId}/events?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(r.status).toBe(200);
    items.push(...(r.body.items as E[]));
    if (r.body.next_cursor === '') return { items, ended: true };
    if (r.body.items.length === 0) return { items, ended: false };
    cursor = r.body.next_cursor as string;
  }
}
