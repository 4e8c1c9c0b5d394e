/**
 * Friendly names for the shapes of docs/openapi.yaml (the generated `components` and `paths`).
 * Objects may carry fields added to the document later: code reading them should not assume the
 * listed fields are all there is.
 */
import type { components, paths } from './generated/openapi';

export type { components, paths };

type Schemas = components['schemas'];
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

export type SceneCode = Schemas['SceneCode'];
export type TaskStatus = Schemas['TaskStatus'];
export type Task = Schemas['Task'];
export type Frame = Schemas['Frame'];
export type DetectedObject = Schemas['DetectedObject'];
export type BBox = Schemas['BBox'];
export type Scene = Schemas['Scene'];
export type QuotaKind = Schemas['QuotaKind'];
export type ImageDetection = Schemas['ImageDetection'];
export type ImageResult = ImageDetection['results'][number];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
export type ErrorCode = ErrorEnvelope['error']['code'];

export type TaskPage = Json<paths['/v1/vision/tasks']['get']['responses'][200]>;
export type ResultPage = Json<paths['/v1/vision/tasks/{task_id}/results']['get']['responses'][200]>;
export type SceneList = Json<paths['/api/op/v1/scenes']['get']['responses'][200]>;
export type Quota = Json<paths['/v1/vision/quota']['get']['responses'][200]>;

/** Every task status, in the order of SPEC.md section 3. */
export const TASK_STATUSES = [
  'submitting',
  'resolving',
  'running',
  'stopping',
  'stopped',
  'succeeded',
  'failed',
  'refunded',
] as const satisfies readonly TaskStatus[];
// Fails to compile when docs/openapi.yaml gains a status that the list above lacks.
const everyStatusListed: Exclude<TaskStatus, (typeof TASK_STATUSES)[number]> extends never ? true : never =
  true;
void everyStatusListed;

/** The states after which a task never changes again (SPEC.md section 3). */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['stopped', 'succeeded', 'failed', 'refunded'];
