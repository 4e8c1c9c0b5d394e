/**
 * `npm run keys -- <command>` exactly as docs/SECURITY.md tells an operator to run it (the script builds
 * first, then runs services/gateway/dist/keys-cli.js), against the key database that `env` names:
 * VISION_DATA_DIR (standalone, PGlite), or VISION_MODE=distributed with DATABASE_URL.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');

export interface KeysRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command without blocking this process (the services a test started keep being served). */
export function runKeys(env: Record<string, string>, ...args: string[]): Promise<KeysRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'keys', '--', ...args], {
      cwd: REPO,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** `npm run keys -- create --subject <subject>`: the key (printed once) and its id. */
export async function createKey(
  env: Record<string, string>,
  subject: string,
): Promise<{ key: string; keyId: string }> {
  const r = await runKeys(env, 'create', '--subject', subject);
  const key = /^key:\s+(\S+)$/m.exec(r.stdout)?.[1];
  const keyId = /^key_id:\s+(\S+)$/m.exec(r.stdout)?.[1];
  if (r.status !== 0 || !key || !keyId)
    throw new Error(`npm run keys -- create failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return { key, keyId };
}
