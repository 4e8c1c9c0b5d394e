/**
 * The contract's words: what SPEC.md names and every service answers with the same spelling. The error
 * envelope and its reasons (errors.ts, reasons.ts), a failed task's reasons (task-reasons.ts), the scenes
 * (scenes.ts), the upload limits (upload-limits.ts), the one reader of Retry-After (retry-after.ts) and
 * quota's answer to a reported spend (quota-spend.ts). Pure: imports nothing of this package's other concerns.
 */
export * from './errors';
export * from './reasons';
export * from './upload-limits';
export * from './retry-after';
export * from './quota-spend';
export * from './scenes';
export * from './task-reasons';
