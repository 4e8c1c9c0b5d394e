/**
 * The environment ffmpeg and ffprobe run with: the locale and a search path, nothing else. No
 * DATABASE_URL, object-store keys, identity keys directory, admin token, proxies or no_proxy: a decoder reading
 * a caller's stream must not be able to use (or leak) what the service holds.
 */
export function decoderEnv(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    PATH: from.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
  };
}
