/**
 * Identity between services: who may call which internal route (identity-routes.ts), the signed identity a
 * call carries and its verification (identity.ts), the keys behind it (identity-keys.ts), the guard on each
 * route (identity-guard.ts), and the grant a job's frames travel with (job-grant.ts).
 */
export * from './identity';
export * from './identity-keys';
export * from './identity-routes';
export * from './identity-guard';
export * from './job-grant';
