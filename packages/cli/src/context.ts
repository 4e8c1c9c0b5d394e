import type { Command } from 'commander';
import { VisionClient } from '@vision/sdk';
import { UsageError } from './exit-codes';

export interface GlobalOptions {
  baseUrl?: string;
  apiKey?: string;
}

/** The client configured by --base-url/--api-key or VISION_BASE_URL/VISION_API_KEY. */
export function clientFor(cmd: Command): VisionClient {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  if (!opts.baseUrl) throw new UsageError('no service address: set VISION_BASE_URL or pass --base-url');
  if (!opts.apiKey) throw new UsageError('no API key: set VISION_API_KEY or pass --api-key');
  try {
    new URL(opts.baseUrl);
  } catch {
    throw new UsageError(`--base-url / VISION_BASE_URL is not a URL: ${opts.baseUrl}`);
  }
  return new VisionClient({ baseUrl: opts.baseUrl, apiKey: opts.apiKey });
}

/** Writes one line to stdout, waiting when the pipe is full (long result streams stay bounded). */
export function out(line: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(`${line}\n`)) resolve();
    else process.stdout.once('drain', resolve);
  });
}

export const json = (value: unknown) => JSON.stringify(value, null, 2);

/** A number option in [min, max]. */
export function numberIn(name: string, min: number, max: number, integer = false) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
      throw new UsageError(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    return n;
  };
}
