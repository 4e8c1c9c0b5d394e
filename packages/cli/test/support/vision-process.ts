import { execFile } from 'node:child_process';
import path from 'node:path';

export const BIN = path.resolve(__dirname, '../../bin/vision.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node packages/cli/bin/vision.js ARGS` with only PATH and the given environment (stdout and stderr
 * are pipes, not terminals); an `undefined` value leaves that variable out.
 */
export function runVision(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
