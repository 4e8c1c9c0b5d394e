/**
 * kafkajs 2.2.4 starts each connection's request queue with a timer of a negative delay (`throttledUntil` starts
 * at -1; tulios/kafkajs#1751). Node has always run such a timer after 1 ms; since Node 24 it also prints a
 * TimeoutNegativeWarning, once per process, which says nothing an operator can act on. This drops exactly that
 * warning: a TimeoutNegativeWarning raised from kafkajs's request queue. Every other warning, a negative timeout of
 * any other code included, is emitted and printed as before.
 */

/** The frame of kafkajs's request queue in the stack of the warning's timer. */
const REQUEST_QUEUE = /[\\/]kafkajs[\\/]src[\\/]network[\\/]requestQueue[\\/]/;

let installed = false;

/** The type a process.emitWarning call names: `(warning, type)`, `(warning, { type })` or an Error's name. */
function warningType(warning: unknown, typeOrOptions: unknown): unknown {
  if (typeof typeOrOptions === 'string') return typeOrOptions;
  if (typeof typeOrOptions === 'object' && typeOrOptions !== null && 'type' in typeOrOptions)
    return (typeOrOptions as { type?: unknown }).type;
  return warning instanceof Error ? warning.name : undefined;
}

/** Drops kafkajs's TimeoutNegativeWarning from now on (idempotent); called where a kafkajs client is made. */
export function dropKafkajsNegativeTimeoutWarning(): void {
  if (installed) return;
  installed = true;
  const emit = process.emitWarning;
  const filtered = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    if (
      warningType(warning, rest[0]) === 'TimeoutNegativeWarning' &&
      REQUEST_QUEUE.test(new Error().stack ?? '')
    )
      return;
    Reflect.apply(emit, this, [warning, ...rest]);
  };
  process.emitWarning = filtered as typeof process.emitWarning;
}
