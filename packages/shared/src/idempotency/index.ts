/**
 * Idempotent requests (SPEC.md 4.1, 4.2, 4.6): the Idempotency-Key and the answers to its faults
 * (idempotency/key.ts), and the one claim mechanism over it: the pure decision (claim-decision.ts), the
 * store port and its knex table (claim-table.ts), and the driver (claims.ts).
 */
export * from './key';
export * from './claim-decision';
export * from './claim-table';
export * from './claims';
