/**
 * POST /v1/vision/tasks and POST /v1/vision/video-tasks (SPEC.md 4.1, 4.2): the request's shape, then the
 * create use case under the Idempotency-Key's claim, whose owner alone runs the remaining checks.
 */
import { createHash } from 'node:crypto';
import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { ApiError, type Identity, REASON, identityOf, inTurn, invalidRequest, route } from '@vision/shared';
import { rulesOfRequest, rulesOfUpload } from '../domain/task-rules';
import { fingerprintOf, plainUrlFingerprintOf } from '../domain/fingerprint';
import { parseStreamUrl } from '../domain/stream-url';
import { toPublicTask } from '../domain/task-view';
import { receiveVideoUpload } from '../media/video-upload';
import { probeStream } from '../probe/ffprobe';
import { guardStreamUrl } from '../probe/stream-guard';
import type { Admission, CreateControl } from '../use-cases/create-task';
import type { HttpDeps } from './deps';
import { idempotencyKeyOf, strictBody } from './validation';

function send(res: Response, a: Admission): void {
  for (const [k, v] of Object.entries(a.headers)) res.setHeader(k, v);
  res.status(a.status).json(toPublicTask(a.task));
}

const subjectHash = (subject: string) => createHash('sha256').update(subject).digest('hex').slice(0, 16);

export function mountCreateRoutes(app: Express, d: HttpDeps): void {
  const { create, scenes, settings } = d;

  app.post(
    '/v1/vision/tasks',
    route(async (req, res) => {
      const identity = identityOf(res);
      const key = idempotencyKeyOf(req);
      const body = strictBody(
        { scene_code: z.unknown(), stream_url: z.unknown(), zones: z.unknown(), lines: z.unknown() },
        req.body,
      );
      const parsed = parseStreamUrl(body.stream_url);
      if (!parsed.ok) throw invalidRequest(parsed.problem, REASON.stream_url_invalid);
      const rules = rulesOfRequest(body.zones, body.lines);
      const sceneCode = typeof body.scene_code === 'string' ? body.scene_code : '';
      const ruleText = rules ? { rules: rules.canonical } : {};
      const fingerprint = fingerprintOf({
        endpoint: 'tasks',
        scene_code: sceneCode,
        stream_url_digest: d.ctx.streamUrls.digest(parsed.url.href),
        ...ruleText,
      });
      const earlierFingerprints = [
        plainUrlFingerprintOf({ scene_code: sceneCode, stream_url: parsed.url.href, ...ruleText }),
      ];
      const admission = await inTurn(d.admission, req, res, identity.subject, 0, (control) =>
        create.create(identity, { key, fingerprint, earlierFingerprints, ...control }, async () => {
          create.assertAcceptingNewTasks();
          const scene = await scenes.requireVideoScene(body.scene_code);
          const guard = await guardStreamUrl(parsed.url, {
            allowPrivate: settings.allowPrivateNetworks,
            timeoutMs: settings.probeTimeoutMs,
            resolve: settings.resolveHost,
          });
          if (!guard.ok) throw invalidRequest(guard.problem, guard.reason);
          await create.assertActiveRoom(identity.subject);
          const probe = await probeStream(guard.url.href, guard.url.scheme, {
            timeoutMs: settings.probeTimeoutMs,
            ffprobePath: settings.ffprobePath,
            httpProxy: settings.httpProxy,
            pin: guard.addresses[0],
            port: guard.url.port,
          });
          if (!probe.ok && probe.ourSide)
            throw new ApiError('OP-SYS-UNAVAILABLE', 'The stream probe could not run; retry later', {
              reason: REASON.probe_unavailable,
            });
          if (!probe.ok && probe.refused)
            throw invalidRequest(`stream_url is refused: ${probe.problem}`, REASON.stream_url_invalid);
          if (!probe.ok)
            throw invalidRequest(`stream_url is not reachable: ${probe.problem}`, REASON.stream_unreachable);
          return {
            scene_code: scene.scene_code,
            business_threshold: settings.businessThreshold,
            lower_bound: scene.lower_bound,
            source_type: 'stream',
            stream_url: parsed.url.href,
            stream_url_redacted: parsed.url.redacted,
            retention_days: settings.retentionDays,
            ...(rules ? { rules: rules.set } : {}),
          };
        }),
      );
      send(res, admission);
    }),
  );

  app.post(
    '/v1/vision/video-tasks',
    route(async (req, res) => {
      const identity = identityOf(res);
      const key = idempotencyKeyOf(req);
      await inTurn(d.admission, req, res, identity.subject, settings.maxVideoBytes, (control) =>
        createFromUpload(identity, key, req, res, control),
      );
    }),
  );

  const createFromUpload = async (
    identity: Identity,
    key: string,
    req: Request,
    res: Response,
    control: CreateControl,
  ): Promise<void> => {
    // The fingerprint needs the file's hash, so the upload comes first; a replay deletes its copy.
    const video = await receiveVideoUpload(req, d.objects, {
      maxBytes: settings.maxVideoBytes,
      keyPrefix: `videos/${subjectHash(identity.subject)}`,
    });
    let admission: Admission | undefined;
    try {
      const rules = rulesOfUpload(video.zones, video.lines);
      const fingerprint = fingerprintOf({
        endpoint: 'video-tasks',
        scene_code: video.sceneCode ?? '',
        file_sha256: video.sha256,
        ...(rules ? { rules: rules.canonical } : {}),
      });
      admission = await create.create(identity, { key, fingerprint, ...control }, async () => {
        create.assertAcceptingNewTasks();
        const scene = await scenes.requireVideoScene(video.sceneCode);
        await create.assertActiveRoom(identity.subject);
        return {
          scene_code: scene.scene_code,
          business_threshold: settings.businessThreshold,
          lower_bound: scene.lower_bound,
          source_type: 'file',
          object_key: video.key,
          object_sha256: video.sha256,
          object_size: video.size,
          retention_days: settings.retentionDays,
          ...(rules ? { rules: rules.set } : {}),
        };
      });
    } finally {
      // A replay, a refusal or an error keeps no copy; deleted before the answer goes out. An error
      // raised after the task row was written (recovery will submit it) keeps the object; so does
      // a failure to ask the store (an orphan is better than a job whose video is gone).
      if (
        admission?.task.object_key !== video.key &&
        !(await d.ctx.store.referencesObject(video.key).catch(() => true))
      )
        await d.objects.delete([video.key]).catch(() => undefined);
    }
    send(res, admission);
  };
}
