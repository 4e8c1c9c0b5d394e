/**
 * Configuration: the keys every service reads besides its own, loading them from the environment and
 * secret files, and the refusal of a bad value before the service starts (config.ts).
 */
export * from './config';
