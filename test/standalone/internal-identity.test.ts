/**
 * Internal identity through the real services of the standalone process: every internal call carries
 * a header signed (Ed25519) by its caller's own key for the service it is for, expiring within seconds.
 * Inference checks it in standalone mode too: a header made for tasks, an expired one, one signed by an
 * issuer that does not call inference (the gateway), one signed with a key that is not the issuer's,
 * or none, are refused; the public API (gateway -> images -> quota, inference, tasks) keeps working.
 */
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  IDENTITY_HEADER,
  IDENTITY_TTL_MS,
  IDENTITY_CLOCK_SKEW_MS,
  loadCallingIdentity,
  signIdentity,
  callHash,
  type IdentitySigner,
} from '@vision/shared';
import { start as startInference } from '@vision/inference';
import { MEDIA, settledQuota, startStandaloneStack, type TestStack } from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const KEY = 'identity-acme-0123456789abcdef';

/** A header with these claims, signed with `signer`'s key. */
function withClaims(signer: IdentitySigner, claims: Record<string, string>): string {
  const now = Date.now();
  const body = { sub: 'acme', rid: 'r', iat: now, exp: now + 10_000, ...claims };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${payload}.${sign(null, Buffer.from(payload), signer.key).toString('base64url')}`;
}

describe('internal identity in the standalone process', () => {
  let stack: TestStack;
  let tasks: IdentitySigner;
  let gateway: IdentitySigner;
  let inferenceUrl: string;
  beforeAll(async () => {
    stack = await startStandaloneStack({ keys: `${KEY}:acme` });
    const standalone = stack.standalone!;
    // The keys standalone made under its data dir at first start.
    tasks = loadCallingIdentity(standalone.env.VISION_IDENTITY_DIR, 'tasks').signer;
    gateway = loadCallingIdentity(standalone.env.VISION_IDENTITY_DIR, 'gateway').signer;
    inferenceUrl = standalone.services.inference.url;
  }, 120_000);
  afterAll(() => stack?.close());

  const scenes = (header?: string) =>
    fetch(`${inferenceUrl}/internal/v1/scenes`, { headers: header ? { [IDENTITY_HEADER]: header } : {} });
  const id = { subject: 'acme', requestId: 'req-identity' };
  const call = { method: 'GET', target: '/internal/v1/scenes' };

  it('inference refuses a header for another service, an expired one, a forged one and none', async () => {
    // A header right in every way but its age is our own delay (the call waited too long inside), not the caller's
    // fault: 503 with Retry-After, never 401.
    const expired = await scenes(
      signIdentity(
        tasks,
        id,
        'inference',
        call,
        Date.now() - IDENTITY_TTL_MS - IDENTITY_CLOCK_SKEW_MS - 1000,
      ),
    );
    expect({ status: expired.status, retryAfter: expired.headers.get('retry-after') !== null }).toEqual({
      status: 503,
      retryAfter: true,
    });
    expect(((await expired.json()) as { error: { code: string } }).error.code).toBe('OP-SYS-UNAVAILABLE');
    const refused = {
      none: undefined,
      for_quota: signIdentity(tasks, id, 'quota', call),
      for_tasks: signIdentity(gateway, id, 'tasks', call),
      // The gateway does not call inference: its own key cannot speak there (the header is made by hand,
      // as signIdentity refuses to sign out of scope).
      gateway_key: withClaims(gateway, { iss: 'gateway', aud: 'inference', call: callHash(call) }),
      other_key: signIdentity(
        { issuer: 'tasks', key: generateKeyPairSync('ed25519').privateKey },
        id,
        'inference',
        call,
      ),
    };
    for (const [what, header] of Object.entries(refused)) {
      const res = await scenes(header);
      expect({ what, status: res.status }).toEqual({ what, status: 401 });
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('OP-AUTH-REQUIRED');
    }
    expect((await scenes(signIdentity(tasks, id, 'inference', call))).status).toBe(200);
  });

  it('the public API works through gateway, images, quota, inference and tasks with audience-bound headers', async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    const jpg = readFileSync(path.join(MEDIA, 'images/street_bus_pedestrians_coco2006.jpg'));
    form.append('files', new Blob([jpg], { type: 'image/jpeg' }), 'a.jpg');
    const created = await stack.api('POST', '/v1/vision/image-detections', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    expect(created.body.results[0].status).toBe('succeeded');
    const task = await stack.api('GET', `/v1/vision/tasks/${created.body.task_id}`, { key: KEY });
    expect(task.status).toBe(200);
    expect((await settledQuota(stack, KEY)).images.used).toBe(1);
  }, 60_000);

  it("inference does not start without its callers' public keys", async () => {
    const env = { ...stack.standalone!.env, VISION_IDENTITY_DIR: undefined };
    await expect(startInference({ env, port: 0, host: '127.0.0.1' })).rejects.toThrow(/VISION_IDENTITY_DIR/);
  });
});
