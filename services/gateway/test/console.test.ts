import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { createLogger, errorHandler, requestIdMiddleware } from '@vision/shared';
import { mountConsole, resolveConsoleDir } from '../src/http/console';

describe('console files at /console/', () => {
  let dir: string;
  const app = (d: string | undefined) => {
    const a = express();
    a.use(requestIdMiddleware());
    mountConsole(a, d);
    a.use((_req, res) => res.status(401).json({ error: 'auth would run here' }));
    a.use(errorHandler(createLogger('test', { level: 'silent' })));
    return a;
  };
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'console-dist-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>c</title>');
    writeFileSync(path.join(dir, 'main.js'), 'export {};');
    mkdirSync(path.join(dir, '.types'));
    writeFileSync(path.join(dir, '.types', 'main.d.ts'), 'export {};');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the build output without a key, with a strict content security policy', async () => {
    const index = await request(app(dir)).get('/console/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toMatch(/text\/html/);
    expect(index.headers['content-security-policy']).toContain("script-src 'self'");
    expect(index.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    const js = await request(app(dir)).get('/console/main.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
  });

  it('redirects /console to /console/; unknown files, dotfiles and escapes are 404 OP-NOT-FOUND', async () => {
    const r = await request(app(dir)).get('/console');
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe('/console/');
    for (const p of ['/console/nope.js', '/console/.types/main.d.ts', '/console/..%2fpackage.json']) {
      const res = await request(app(dir)).get(p);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('OP-NOT-FOUND');
    }
    const post = await request(app(dir)).post('/console/index.html');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    // Other paths go on to authentication.
    expect((await request(app(dir)).get('/consoles')).status).toBe(401);
  });

  it('says so when the console was not built', async () => {
    expect(resolveConsoleDir(path.join(dir, 'missing'))).toBeUndefined();
    expect(resolveConsoleDir(dir)).toBe(dir);
    const res = await request(app(undefined)).get('/console/');
    expect(res.status).toBe(404);
    expect(res.body.error.message).toMatch(/not built/);
  });
});
