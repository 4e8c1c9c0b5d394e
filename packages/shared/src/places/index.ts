/**
 * The rules of places (zones and lines over a video task's frames, zones over an image) and the plane geometry
 * they are decided with: pure, shared by the services that accept rules (tasks, images) and the one that
 * evaluates them (results). docs/ANALYTICS.md.
 */
export * from './geometry';
export * from './rules';
export * from './rules-request';
export * from './counts';
export * from './coverage';
export * from './image-zones';
export * from './evidence';
