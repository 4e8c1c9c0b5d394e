/**
 * Admission: which request runs now and which waits or is shed. The queue with its fair order and adaptive
 * limit (admission-queue.ts, fair-queue.ts, adaptive-limit.ts), the load report it answers with
 * (load-report.ts), and a request's deadline (deadline.ts). The HTTP side, a request waiting its turn, is
 * the edge's (edge/in-turn.ts).
 */
export * from './admission-queue';
export * from './deadline';
