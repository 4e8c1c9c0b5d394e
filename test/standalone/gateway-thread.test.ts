/**
 * The standalone gateway on its own thread (docs/STANDALONE.md, "What runs where"): it answers while the
 * main thread, where the other five services and the database run, is blocked; it looks keys up in the
 * key store of the main thread, and a revocation made there empties its key cache at once; an error
 * nothing handles in its thread ends `npm start`'s process as any fatal error does (status 70, logged).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStandaloneProcess } from '../helpers/standalone-process';
import { startStandaloneStack, type TestStack } from '../helpers/stack';

const KEY = 'thread-acme-0123456789abcdef';

/** Blocks this thread (no callback, timer or socket of it runs) until `done()` or `maxMs`; answers done(). */
function blockUntil(done: () => boolean, maxMs: number): boolean {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + maxMs;
  while (!done()) {
    if (Date.now() > until) return false;
    Atomics.wait(cell, 0, 0, 50);
  }
  return true;
}

describe('the standalone gateway thread', () => {
  let stack: TestStack;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-thread-'));
  beforeAll(async () => {
    // A long cache: only a revocation can take a looked-up key out of it within this test.
    stack = await startStandaloneStack({ keys: `${KEY}:acme`, env: { GATEWAY_AUTH_CACHE_MS: '300000' } });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers while the main thread is blocked', async () => {
    const out = path.join(dir, 'answer');
    // Another process asks the gateway and writes the answer (renamed into place whole) ...
    const script = `fetch(process.argv[1]).then(async (r) => {
      const fs = require('node:fs');
      fs.writeFileSync(process.argv[2] + '.tmp', r.status + ' ' + (await r.text()));
      fs.renameSync(process.argv[2] + '.tmp', process.argv[2]);
    })`;
    const child = spawn(process.execPath, ['-e', script, `${stack.url}/healthz`, out], { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    // ... while this thread, the one the five services and the database run on, does nothing else.
    const answered = blockUntil(() => existsSync(out), 60_000);
    await exited;
    expect(answered).toBe(true);
    expect(readFileSync(out, 'utf8')).toBe('200 {"status":"up","service":"gateway"}');
  }, 90_000);

  it('looks keys up in the main thread; a revocation there empties the cache of the thread at once', async () => {
    const keys = stack.standalone!.gateway.keys;
    const made = await keys.create('acme');
    const quota = async (key: string) =>
      (await fetch(`${stack.url}/v1/vision/quota`, { headers: { authorization: `Bearer ${key}` } })).status;
    expect(await quota(made.key)).toBe(200);
    expect(await quota(made.key)).toBe(200); // from the cache of the thread
    expect(await keys.revoke(made.keyId)).toBe(true);
    expect(await quota(made.key)).toBe(401);
    expect(await quota(KEY)).toBe(200);
  }, 60_000);

  it("an error in the gateway's thread ends the process with status 70, logged", async () => {
    const fixture = path.resolve(__dirname, '../fixtures/fail-in-gateway-thread.js');
    const svc = await startStandaloneProcess({ LOG_LEVEL: 'warn', NODE_OPTIONS: `--require ${fixture}` });
    try {
      await fetch(`${svc.url}/fail-this-thread`).catch(() => undefined);
      const code = await svc.exitCode();
      expect(code).toBe(70);
      expect(svc.output()).toContain('the gateway thread failed');
      expect(svc.output()).toContain('an error nothing handled, in the gateway thread');
      expect(svc.output()).toContain('fatal error; exiting');
    } finally {
      await svc.stop();
    }
  }, 180_000);
});
