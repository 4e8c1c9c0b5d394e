/** Types of scripts/distributed/ports.js. */
export type PortKind = 'services' | 'streams';

/** The range of `kind` for the set of the stack's servers in use (VISION_STACK_SET). */
export function portRange(kind: PortKind): { from: number; to: number };

/** A loopback port of the range of `kind` that nothing listens on now and that this process did not hand out. */
export function freePort(kind?: PortKind): Promise<number>;
