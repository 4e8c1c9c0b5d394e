import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REASON } from '@vision/shared';
import { standaloneOnly } from '../helpers/composition';
import { startStack, startStandaloneStack, type TestStack } from '../helpers/stack';

const KEY = 'e2e-key-acme-0123456789';
const atTheGateway = standaloneOnly('the gateway answers before it forwards anything');
const ownStack = standaloneOnly('the test starts the standalone composition itself');

describe('standalone stack: foundation', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:acme` });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('lists the five scenes of the spec with their engine, labels, bounds and threshold', async () => {
    const res = await stack.api('GET', '/api/op/v1/scenes', { key: KEY });
    expect(res.status).toBe(200);
    const codes = res.body.scenes.map((s: { scene_code: string }) => s.scene_code).sort();
    expect(codes).toEqual(['cow_sheep', 'fire_smoke', 'fishing', 'person_vehicle', 'ship']);
    for (const s of res.body.scenes) {
      expect(s.default_business_threshold).toBe(0.8);
      if (!s.enabled) expect(typeof s.reason).toBe('string');
    }
    const pv = res.body.scenes.find((s: { scene_code: string }) => s.scene_code === 'person_vehicle');
    expect(pv.enabled).toBe(true);
    expect(pv.labels).toEqual(expect.arrayContaining(['person', 'car']));
  });

  it('the same malformed Idempotency-Key, or a body that is not multipart, gets the same answer from every create endpoint', async () => {
    const json = { 'content-type': 'application/json' };
    const form = () => {
      const f = new FormData();
      f.append('scene_code', 'ship');
      return f;
    };
    const errors: { code: string; details: unknown }[] = [];
    for (const key of [undefined, 'not-a-uuid']) {
      const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
      const body = JSON.stringify({ scene_code: 'ship', stream_url: 'rtsp://127.0.0.1/x' });
      const answers = [
        await stack.api('POST', '/v1/vision/tasks', { key: KEY, headers: { ...headers, ...json }, body }),
        await stack.api('POST', '/v1/vision/video-tasks', { key: KEY, headers, body: form() }),
        await stack.api('POST', '/v1/vision/image-detections', { key: KEY, headers, body: form() }),
      ];
      for (const r of answers) {
        expect(r.status).toBe(400);
        const { code, details } = r.body.error;
        errors.push({ code, details });
      }
    }
    expect(errors.slice(0, 3).every((e) => JSON.stringify(e) === JSON.stringify(errors[0]))).toBe(true);
    expect(errors.slice(3).every((e) => JSON.stringify(e) === JSON.stringify(errors[3]))).toBe(true);
    expect(errors[0]).toEqual({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason: REASON.idempotency_key, problem: 'missing' },
    });
    expect(errors[3]).toEqual({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason: REASON.idempotency_key, problem: 'not_uuid' },
    });
    // Not multipart, on both upload endpoints: one reason.
    const key = { 'idempotency-key': '3f2c1b9e-8a7d-4c6b-9e5f-1a2b3c4d5e6f', ...json };
    for (const p of ['/v1/vision/video-tasks', '/v1/vision/image-detections']) {
      const r = await stack.api('POST', p, { key: KEY, headers: key, body: '{}' });
      expect(r.status).toBe(400);
      expect(r.body.error.details.reason).toBe(REASON.not_multipart);
    }
  });

  atTheGateway.it('refuses requests without a valid key with the envelope', async () => {
    const res = await stack.api('GET', '/api/op/v1/scenes');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({
      code: 'OP-AUTH-REQUIRED',
      request_id: res.headers.get('x-request-id'),
    });
  });

  it('answers malformed JSON with 400 OP-TASK-REQUEST-INVALID, never 500', async () => {
    const res = await stack.api('POST', '/v1/vision/tasks', {
      key: KEY,
      headers: {
        'content-type': 'application/json',
        'idempotency-key': '3b241101-e2bb-4255-8caf-4136c566a962',
      },
      body: '{"scene_code": "ship", ',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
  });

  atTheGateway.it('gives a JSON 404 for unknown routes', async () => {
    const res = await fetch(`${stack.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { request_id: string } }).error.request_id).toBe(
      res.headers.get('x-request-id'),
    );
  });

  atTheGateway.it('serves its OpenAPI document', async () => {
    const res = await stack.api('GET', '/openapi.json', { key: KEY });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
  });
});

ownStack.describe('standalone stack: restart', () => {
  it('creates one dev key on first start and keeps it across a restart', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-restart-'));
    try {
      const first = await startStandaloneStack({ dataDir });
      const dev = first.standalone?.gateway.devKey;
      expect(dev?.key).toBeDefined();
      expect((await first.api('GET', '/api/op/v1/scenes', { key: dev!.key })).status).toBe(200);
      await first.close();

      const second = await startStandaloneStack({ dataDir });
      expect(second.standalone?.gateway.devKey).toBeUndefined();
      expect((await second.api('GET', '/api/op/v1/scenes', { key: dev!.key })).status).toBe(200);
      await second.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

ownStack.describe('npm start', () => {
  const main = path.resolve(__dirname, '../../apps/standalone/dist/main.js');
  it('exits non-zero naming PORT when PORT is not a port', () => {
    expect(existsSync(main)).toBe(true); // `npm test` builds first; run `npm run build` before jest alone
    const r = spawnSync(process.execPath, [main], {
      env: { ...process.env, PORT: 'abc' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('PORT');
  });
});
