/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * A decoder that crashes at runtime is our side, not the caller's stream: a live job whose ffmpeg dies by
 * a signal it was not sent (three times in a row) ends failed with
 * `decoder_unavailable` (the tasks service refunds it) instead of reconnecting until the give-up time and
 * blaming the stream. The real ffmpeg runs behind a wrapper that sends it SIGSEGV one second into each
 * decoding run (the start-up check's runs are left alone).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LiveHttpStream } from './support/live-http-stream';
import { startTestInference, type TestInference } from './support/helpers';

jest.setTimeout(90_000);

let dir: string;
let svc: TestInference;
const stream = new LiveHttpStream();
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'crashing-ffmpeg-'));
  const wrapper = path.join(dir, 'ffmpeg');
  writeFileSync(
    wrapper,
    [
      '#!/usr/bin/env bash',
      'case " $* " in *" pipe:1 "*) ( sleep 1; kill -SEGV $$ ) >/dev/null 2>&1 </dev/null & ;; esac',
      'exec ffmpeg "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(wrapper, 0o755);
  await stream.start();
  svc = await startTestInference({
    FFMPEG_PATH: wrapper,
    STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    INFERENCE_STREAM_GIVEUP_MS: '60000',
    INFERENCE_RECONNECT_MIN_MS: '100',
    INFERENCE_RECONNECT_MAX_MS: '200',
  });
});
afterAll(async () => {
  await svc?.close();
  await stream.kill();
  rmSync(dir, { recursive: true, force: true });
});

it('a live job whose decoder keeps crashing fails as decoder_unavailable, long before the give-up time', async () => {
  const t0 = Date.now();
  const sub = await svc.parts.jobs.submit({
    job_id: 'crash-loop',
    scene_code: 'person_vehicle',
    source: { type: 'stream', url: stream.url },
    sample_fps: 5,
  });
  expect(sub.outcome).toBe('accepted');
  const end = await svc.collector.waitForEnd('crash-loop', 60_000);
  expect(end.status).toBe('failed');
  expect(end.reason).toBe('decoder_unavailable: the video decoder is unavailable (crashed 3 times)');
  expect(svc.parts.jobs.get('crash-loop')?.reconnects).toBe(2);
  expect(Date.now() - t0).toBeLessThan(60_000);
});
