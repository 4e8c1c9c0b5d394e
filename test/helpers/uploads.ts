/**
 * The two upload calls as the end-to-end tests make them when the upload itself is not what they check: a
 * fresh idempotency key, a real file from the media folder, and a 201 expected.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ApiResponse, TestStack } from './stack';

/**
 * POST /v1/vision/video-tasks of `file` (scene person_vehicle) under `filename`, with `fields` (zones, lines: JSON)
 * beside it; answers the new task's id.
 */
export async function uploadVideoTask(
  stack: Pick<TestStack, 'api'>,
  key: string,
  file: string,
  filename = path.basename(file),
  fields: Record<string, string> = {},
): Promise<string> {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([readFileSync(file)]), filename);
  const created = await stack.api('POST', '/v1/vision/video-tasks', {
    key,
    headers: { 'idempotency-key': randomUUID() },
    body: form,
  });
  expect(created.status).toBe(201);
  return (created.body as { task_id: string }).task_id;
}

/** POST /v1/vision/image-detections of one `file` under `filename`, with `scene` as scene_code when given. */
export async function detectImage(
  stack: Pick<TestStack, 'api'>,
  key: string,
  file: string,
  opts: { filename: string; scene?: string },
): Promise<ApiResponse> {
  const form = new FormData();
  if (opts.scene) form.append('scene_code', opts.scene);
  form.append('files', new Blob([readFileSync(file)]), opts.filename);
  const detected = await stack.api('POST', '/v1/vision/image-detections', {
    key,
    headers: { 'idempotency-key': randomUUID() },
    body: form,
  });
  expect(detected.status).toBe(201);
  return detected;
}
