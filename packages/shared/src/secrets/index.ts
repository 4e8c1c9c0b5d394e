/**
 * Secrets kept where they belong: out of every log line, span and answer (redact.ts), and sealed at rest in a
 * database column (secret-box.ts). Pure: imports nothing of this package's other concerns.
 */
export * from './redact';
export * from './secret-box';
