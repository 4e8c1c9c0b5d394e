/** Public endpoints (arriving through the gateway with the signed identity). */
import { createHash } from 'node:crypto';
import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { ApiError, type ObjectStore, identityOf, invalidRequest, route } from '@vision/shared';
import { fingerprintOf } from '../domain/fingerprint';
import { parseStreamUrl } from '../domain/stream-url';
import { toPublicTask } from '../domain/task-view';
import { decodeCursor, encodeCursor } from '../domain/cursor';
import { isTaskStatus } from '../domain/state-machine';
import { receiveVideoUpload } from '../media/video-upload';
import { guardStreamUrl } from '../probe/stream-guard';
import { probeStream } from '../probe/ffprobe';
import type { SceneCatalogue } from '../scene-catalogue';
import type { Admission, TaskEngine } from '../task-engine';
import type { TaskRow, TaskStore } from '../store/task-store';
import { idempotencyKeyOf, strictBody } from './validation';
import { KeyedMutex } from '../domain/keyed-mutex';
import { ownTask as ownTaskOf } from '../http/own-task';

export interface PublicRouteDeps {
  engine: TaskEngine;
  store: TaskStore;
  scenes: SceneCatalogue;
  objects: ObjectStore;
  clock: { now(): Date };
  settings: {
    allowPrivateNetworks: boolean;
    probeTimeoutMs: number;
    ffprobePath: string;
    /** Egress proxy for the probe's HTTP(S) connections (startEgressProxy). */
    httpProxy?: string;
    maxVideoBytes: number;
    businessThreshold: number;
    retentionDays: number;
  };
}

function send(res: Response, a: Admission): void {
  for (const [k, v] of Object.entries(a.headers)) res.setHeader(k, v);
  res.status(a.status).json(toPublicTask(a.task));
}

const subjectHash = (subject: string) => createHash('sha256').update(subject).digest('hex').slice(0, 16);

export function mountPublicRoutes(app: Express, d: PublicRouteDeps): void {
  const sameKey = new KeyedMutex();
  app.get(
    '/api/op/v1/scenes',
    route(async (_req, res) => {
      identityOf(res);
      res.json({ scenes: await d.scenes.list() });
    }),
  );

  app.post(
    '/v1/vision/tasks',
    route(async (req, res) => {
      const identity = identityOf(res);
      const key = idempotencyKeyOf(req);
      const body = strictBody({ scene_code: z.unknown(), stream_url: z.unknown() }, req.body);
      const parsed = parseStreamUrl(body.stream_url);
      if (!parsed.ok) throw invalidRequest(parsed.problem, 'stream_url_invalid');
      const sceneCode = typeof body.scene_code === 'string' ? body.scene_code : '';
      const fingerprint = fingerprintOf({
        endpoint: 'tasks',
        scene_code: sceneCode,
        stream_url: parsed.url.href,
      });
      await sameKey.run(`${identity.subject}\n${key}`, async () => {
        const replay = await d.engine.replay(identity.subject, key, fingerprint);
        if (replay) return send(res, replay);
        d.engine.assertAcceptingNewTasks();
        const scene = await d.scenes.requireVideoScene(body.scene_code);

        const guard = await guardStreamUrl(parsed.url, {
          allowPrivate: d.settings.allowPrivateNetworks,
          timeoutMs: d.settings.probeTimeoutMs,
        });
        if (!guard.ok) throw invalidRequest(guard.problem, guard.reason);
        await d.engine.assertActiveRoom(identity.subject);
        const probe = await probeStream(guard.url.href, guard.url.scheme, {
          timeoutMs: d.settings.probeTimeoutMs,
          ffprobePath: d.settings.ffprobePath,
          httpProxy: d.settings.httpProxy,
          pin: guard.addresses[0],
          port: guard.url.port,
        });
        if (!probe.ok && probe.ourSide)
          throw new ApiError('OP-SYS-UNAVAILABLE', 'The stream probe could not run; retry later', {
            reason: 'probe_unavailable',
          });
        if (!probe.ok && probe.refused)
          throw invalidRequest(`stream_url is refused: ${probe.problem}`, 'stream_url_invalid');
        if (!probe.ok)
          throw invalidRequest(`stream_url is not reachable: ${probe.problem}`, 'stream_unreachable');

        const admission = await d.engine.admit(
          identity,
          { key, fingerprint },
          {
            scene_code: scene.scene_code,
            business_threshold: d.settings.businessThreshold,
            lower_bound: scene.lower_bound,
            source_type: 'stream',
            stream_url: parsed.url.href,
            stream_url_redacted: parsed.url.redacted,
            retention_days: d.settings.retentionDays,
          },
        );
        send(res, admission);
      });
    }),
  );

  app.post(
    '/v1/vision/video-tasks',
    route(async (req, res) => {
      const identity = identityOf(res);
      const key = idempotencyKeyOf(req);
      // The fingerprint needs the file's hash, so the upload comes first; a replay deletes its copy.
      const video = await receiveVideoUpload(req, d.objects, {
        maxBytes: d.settings.maxVideoBytes,
        keyPrefix: `videos/${subjectHash(identity.subject)}`,
      });
      let admission: Admission | undefined;
      try {
        admission = await sameKey.run(`${identity.subject}\n${key}`, async () => {
          const fingerprint = fingerprintOf({
            endpoint: 'video-tasks',
            scene_code: video.sceneCode ?? '',
            file_sha256: video.sha256,
          });
          const replay = await d.engine.replay(identity.subject, key, fingerprint);
          if (replay) return replay;
          d.engine.assertAcceptingNewTasks();
          const scene = await d.scenes.requireVideoScene(video.sceneCode);
          await d.engine.assertActiveRoom(identity.subject);
          return d.engine.admit(
            identity,
            { key, fingerprint },
            {
              scene_code: scene.scene_code,
              business_threshold: d.settings.businessThreshold,
              lower_bound: scene.lower_bound,
              source_type: 'file',
              object_key: video.key,
              object_sha256: video.sha256,
              object_size: video.size,
              retention_days: d.settings.retentionDays,
            },
          );
        });
      } finally {
        // A replay, a refusal or an error keeps no copy; deleted before the answer goes out. An error
        // raised after the task row was written (recovery will submit it) keeps the object; so does
        // a failure to ask the store (an orphan is better than a job whose video is gone).
        if (
          admission?.task.object_key !== video.key &&
          !(await d.store.referencesObject(video.key).catch(() => true))
        )
          await d.objects.delete([video.key]).catch(() => undefined);
      }
      send(res, admission);
    }),
  );

  const ownTask = (req: Request, res: Response): Promise<TaskRow> => ownTaskOf(d.store, req, res);

  app.get(
    '/v1/vision/tasks/:task_id',
    route(async (req, res) => {
      res.json(toPublicTask(await ownTask(req, res)));
    }),
  );

  app.post(
    '/v1/vision/tasks/:task_id/stop',
    route(async (req, res) => {
      const task = await ownTask(req, res);
      if (task.kind !== 'video')
        throw new ApiError('OP-TASK-NOT-STOPPABLE', 'Image detection calls have already ended', {
          status: task.status,
        });
      const r = await d.engine.stop(task);
      res.status(r.status).json(toPublicTask(r.task));
    }),
  );

  const listQuery = z
    .object({
      status: z.string().optional(),
      kind: z.enum(['video', 'image']).optional(),
      limit: z.coerce.number().int().min(1).max(100).optional(),
      cursor: z.string().max(512).optional(),
    })
    .strict();

  app.get(
    '/v1/vision/tasks',
    route(async (req, res) => {
      const identity = identityOf(res);
      const q = listQuery.safeParse(req.query);
      if (!q.success) {
        const i = q.error.issues[0];
        throw invalidRequest(
          i.code === 'unrecognized_keys' ? 'Unknown query parameter' : `Invalid ${i.path.join('.')}`,
          i.code === 'unrecognized_keys' ? 'unknown_field' : 'invalid_query',
        );
      }
      if (q.data.status !== undefined && !isTaskStatus(q.data.status))
        throw invalidRequest('Invalid status filter', 'invalid_query');
      const after = q.data.cursor ? decodeCursor(q.data.cursor) : undefined;
      if (q.data.cursor && !after) throw invalidRequest('Invalid cursor', 'invalid_cursor');
      const limit = q.data.limit ?? 20;
      const rows = await d.store.list(identity.subject, {
        status: q.data.status,
        kind: q.data.kind,
        after,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      res.json({
        items: page.map(toPublicTask),
        next_cursor:
          rows.length > limit && last
            ? encodeCursor({ createdAt: last.created_at.toISOString(), taskId: last.task_id })
            : '',
      });
    }),
  );
}
