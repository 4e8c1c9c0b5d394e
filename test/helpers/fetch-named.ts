/**
 * fetch(), whose failure to get an answer (a refused, closed or reset connection) names the call it was: undici's
 * own error is a bare "fetch failed" with the socket's error as its cause, and no frame of the test.
 */
export async function fetchNamed(call: string, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = cause ? ` (${String(cause.code ?? cause.message)})` : '';
    throw new Error(`${call}: ${err instanceof Error ? err.message : String(err)}${why}`, { cause: err });
  }
}
