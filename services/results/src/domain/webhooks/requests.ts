/** Shapes of the webhook endpoints' requests (docs/WEBHOOKS.md). Pure. */
import { z } from 'zod';
import { CONTROL_CHARACTER } from '@vision/shared';
import { EVENT_TYPES } from './events';

export const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: URL } | { ok: false; problem: string };

/**
 * A webhook URL: absolute http or https, a host, no user information (credentials in a URL end up in logs;
 * the signature authenticates us to the receiver), no fragment. The address it resolves to is checked at
 * registration and again before every attempt (the egress policy of stream URLs).
 */
export function parseWebhookUrl(value: unknown): UrlCheck {
  if (typeof value !== 'string' || value.trim() === '') return { ok: false, problem: 'url is required' };
  if (value.length > MAX_URL_LENGTH)
    return { ok: false, problem: `url exceeds ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, problem: 'url is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, problem: 'url must use https or http' };
  if (!url.hostname) return { ok: false, problem: 'url has no host' };
  if (url.username || url.password) return { ok: false, problem: 'url must not carry user information' };
  if (url.hash) return { ok: false, problem: 'url must not carry a fragment' };
  return { ok: true, url };
}

export const registerShape = {
  url: z.string(),
  event_types: z
    .array(z.enum(EVENT_TYPES))
    .min(1)
    .max(EVENT_TYPES.length)
    .refine((a) => new Set(a).size === a.length, 'event types must be distinct'),
  description: z
    .string()
    .max(200)
    .refine((s) => !CONTROL_CHARACTER.test(s), 'description must not contain control characters')
    .optional(),
};

export const ENDPOINT_ID = /^ep_[0-9a-f]{32}$/;
export const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const deliveriesQueryShape = {
  status: z.enum(DELIVERY_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z
    .string()
    .regex(/^\d{1,18}$/)
    .optional(),
};
