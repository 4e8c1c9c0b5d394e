import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  type AdmissionQueue,
  ApiError,
  type LocalAnswerer,
  type Logger,
  runInService,
  toApiError,
  errorAnswer,
} from '@vision/shared';
import type { DetectCall } from '../detect/detect-call';
import { isRawType, rawImages } from '../http/raw-image';

const DETECT_PATH = '/internal/v1/detect?';

/**
 * Inference's detect call answered in this process, for a service of the same process (standalone): the
 * images service sends one image's bytes with the scene in the query, as over HTTP, and gets the answer the
 * route gives. The same turn in the same admission queue, the same checks and the same pixel budget; no
 * identity header to sign and verify (both ends are this process), no body to stream and parse, no JSON
 * answer to write and read. Any other call is left to HTTP.
 */
export function detectAnswerer(deps: {
  detect: DetectCall;
  admission: AdmissionQueue;
  logger: Logger;
}): LocalAnswerer {
  const tracer = trace.getTracer('vision-inference');
  return (path, opts, signal) => {
    if (
      !path.startsWith(DETECT_PATH) ||
      !Buffer.isBuffer(opts.body) ||
      !isRawType(opts.headers?.['content-type'])
    )
      return undefined;
    const data = opts.body;
    const sceneCode = new URLSearchParams(path.slice(DETECT_PATH.length)).get('scene_code') ?? undefined;
    const { subject, requestId } = opts.identity;
    return runInService('inference', () =>
      tracer.startActiveSpan(
        'detect (in process)',
        { attributes: { scene_code: sceneCode } },
        async (span) => {
          try {
            const turn = await deps.admission.enter(subject, { deadline: opts.deadline, signal });
            try {
              const results = await deps.detect(
                sceneCode,
                rawImages(data.length, () => data),
              );
              return { status: 200, body: { results }, headers: {} };
            } finally {
              turn.release();
            }
          } catch (err) {
            const answer = errorAnswer(toApiError(err), requestId);
            if (!(err instanceof ApiError)) {
              deps.logger.error({ err, request_id: requestId }, 'detect in process failed');
              span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
            }
            return answer;
          } finally {
            span.end();
          }
        },
      ),
    );
  };
}
