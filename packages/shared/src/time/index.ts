/**
 * Time: the injectable clock that day boundaries, expiry and retention read (clock.ts), and the one loop of
 * every background worker: never two runs at once, a failed run logged and the loop going on, each run a root
 * span of its own (periodic.ts).
 */
export * from './clock';
export * from './periodic';
