/**
 * Removes secrets from values that may reach logs, traces, events or responses. The rule (docs/SECURITY.md,
 * "Secrets in URLs"), for every URL inside any text:
 *  - user information (`scheme://user:password@`) becomes `***@`;
 *  - the value of a query or fragment parameter whose name contains `key`, `token`, `pass`, `pwd`,
 *    `secret`, `sig`, `cred`, `auth` or `session` (any case) becomes `***`: presigned S3 URLs'
 *    X-Amz-Credential, X-Amz-Security-Token and X-Amz-Signature, `api_key`, `access_token`, `sig`...;
 *    inside a URL, parameters after `;` too, and those named exactly `p`, `pw` or `pswd`;
 *  - in an RTMP URL (rtmp, rtmps, rtmpt, rtmpe, rtmpte, rtmpts) everything after the application name
 *    (the first path segment), where stream keys live, becomes `***`.
 */
import { createHash } from 'node:crypto';

/** `rtsp://user:pass@host/x` -> `rtsp://***@host/x` (up to the last `@` before the path). Leaves strings without user information untouched. */
export function redactUrl(value: string): string {
  return value.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^/?#\s]*)@/gi, '$1***@');
}

/** A short, non-reversible label for an API key, safe to log. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

const PARAM = /([?&#])([^=&#\s]+)=([^&#\s]*)/g;
const SECRET_PARAM_NAME = /key|token|pass|pwd|secret|sig|cred|auth|session/i;
/** `rtmp://host[:port]/app/` then the play path (stream name or key, any query): the play path goes. */
const RTMP_PLAY_PATH = /\b(rtmp(?:s|t|e|te|ts)?:\/\/[^/?#\s]*\/[^/?#\s]+\/)[^\s"<>]+/gi;

/** A URL inside text: a scheme, `://`, and everything up to white space or a quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
/** Inside a URL, parameters also follow `;` (RTSP cameras: `rtsp://cam/x;user=a;password=s`). */
const URL_PARAM = /([?&#;])([^=&#;\s]+)=([^&#;\s]*)/g;
/** Names too short to search for in free text, secret only as a URL's parameter names (any case). */
const SHORT_SECRET_NAME = /^(?:p|pw|pswd)$/i;

/** Redacts user information, secret query parameters and RTMP play paths inside a URL or free text. */
export function redactText(value: string): string {
  return redactUrl(value)
    .replace(RTMP_PLAY_PATH, '$1***')
    .replace(URL_IN_TEXT, (url) =>
      url.replace(URL_PARAM, (all, sep: string, name: string, v: string) =>
        v && (SECRET_PARAM_NAME.test(name) || SHORT_SECRET_NAME.test(name)) ? `${sep}${name}=***` : all,
      ),
    )
    .replace(PARAM, (all, sep: string, name: string, v: string) =>
      v && SECRET_PARAM_NAME.test(name) ? `${sep}${name}=***` : all,
    );
}
