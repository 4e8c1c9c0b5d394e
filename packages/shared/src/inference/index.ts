/**
 * Calls to the inference backend, used by tasks and images: the one client behind one breaker
 * (inference-client.ts, inference-breaker.ts), pictures sent for detection (inference-pictures.ts), and the
 * gate that knows which scenes the backend has enabled (scene-gate.ts).
 */
export * from './inference-client';
export * from './inference-pictures';
export * from './scene-gate';
