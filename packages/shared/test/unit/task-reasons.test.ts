import {
  TASK_REASON_MAX,
  refusedRtspOption,
  taskReason,
  taskReasonCode,
  toTaskReason,
} from '../../src/index';

describe('task reasons (closed list)', () => {
  it('builds code: message, with a detail only of words and digits', () => {
    expect(taskReason('stream_lost', 'after 30000 ms, stream_unreachable')).toBe(
      'stream_lost: the stream was lost and did not come back in time (after 30000 ms, stream_unreachable)',
    );
    expect(taskReason('stream_auth_failed', 'rtsp://u:p@10.0.0.1/x')).toBe(
      'stream_auth_failed: the stream server refused the credentials',
    );
    expect(taskReasonCode(taskReason('decoder_unavailable'))).toBe('decoder_unavailable');
  });

  it('maps anything else into the list, never longer than the bound', () => {
    // A junk upload's decoder error: an internal path and an ffmpeg line.
    expect(
      toTaskReason('/var/lib/vision/objects/videos/ab12/5f3c: Invalid data found when processing input'),
    ).toBe('internal_error: internal error');
    expect(toTaskReason('backend_lost_job')).toBe('backend_lost_job: the inference backend lost the job');
    expect(toTaskReason('backend_rejected: stream host resolves to a loopback address (refused)')).toBe(
      'backend_rejected: the inference backend refused the job (refused)',
    );
    const presigned = 'stream_unreachable: x (https://minio:9000/b/k?X-Amz-Credential=AKIA/2026)';
    expect(toTaskReason(presigned)).toBe('stream_unreachable: the stream could not be reached');
    const long = `stream_lost: x (${'a'.repeat(59)})`;
    expect(toTaskReason(long).length).toBeLessThanOrEqual(TASK_REASON_MAX);
    expect(toTaskReason('x'.repeat(5000)).length).toBeLessThanOrEqual(TASK_REASON_MAX);
  });
});

describe('RTSP guards', () => {
  it('refuses transport-changing RTSP URL options', () => {
    expect(refusedRtspOption(new URL('rtsp://h/cam?udp'))).toBe('udp');
    expect(refusedRtspOption(new URL('rtsp://h/cam?a=1&multicast'))).toBe('multicast');
    expect(refusedRtspOption(new URL('rtsp://h/cam?http'))).toBe('http');
    expect(refusedRtspOption(new URL('rtsp://h/cam?channel=1&subtype=0'))).toBeUndefined();
    expect(refusedRtspOption(new URL('http://h/cam?udp'))).toBeUndefined();
  });
});
