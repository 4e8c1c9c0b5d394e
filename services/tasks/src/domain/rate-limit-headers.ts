/**
 * RateLimit-Policy / RateLimit response headers (IETF draft-ietf-httpapi-ratelimit-headers, structured
 * field form) for the daily video task quota. Pure.
 *
 *   RateLimit-Policy: "video-daily";q=5;w=86400
 *   RateLimit: "video-daily";r=3;t=41234
 */
export interface QuotaFigures {
  limit: number;
  remaining: number;
  resets_at: string;
}

export function isQuotaFigures(v: unknown): v is QuotaFigures {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.limit === 'number' &&
    typeof o.remaining === 'number' &&
    typeof o.resets_at === 'string' &&
    !Number.isNaN(Date.parse(o.resets_at))
  );
}

export function rateLimitHeaders(f: QuotaFigures, now: Date, policy = 'video-daily'): Record<string, string> {
  const t = Math.max(0, Math.ceil((Date.parse(f.resets_at) - now.getTime()) / 1000));
  return {
    'RateLimit-Policy': `"${policy}";q=${Math.max(0, Math.floor(f.limit))};w=86400`,
    RateLimit: `"${policy}";r=${Math.max(0, Math.floor(f.remaining))};t=${t}`,
  };
}
