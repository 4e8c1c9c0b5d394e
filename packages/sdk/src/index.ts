export * from './types';
export { VisionClient, SDK_VERSION } from './client';
export type { VisionClientOptions, ListTasksOptions } from './client';
export type { CreateOptions, UploadOptions, CreatedTask } from './create';
export { VisionApiError, VisionNetworkError, VisionTimeoutError } from './errors';
export type { UploadSource, UploadData, UploadProgress, ProgressCallback } from './multipart';
export type { RetryOptions } from './retry';
export type { ResultsOptions } from './results';
export type { FollowOptions } from './stream';
export type { Picture, PictureOptions } from './pictures';
export type { WaitOptions } from './wait';
export { WebhooksApi, verifyWebhook } from './webhooks';
export { PlacesApi } from './places';
export type {
  Zone,
  Line,
  ZoneInput,
  LineInput,
  OccupancyAlertInput,
  RuleSetInput,
  TaskRules,
  Analytics,
  ZoneSummary,
  LineSummary,
  AnalyticsEvent,
  ImageZoneCounts,
  SnapshotReason,
  EventPage,
  EventsOptions,
  FollowEventsOptions,
  ReplayResult,
} from './places';
export type {
  WebhookEventType,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookDelivery,
  WebhookEvent,
  DeliveryPage,
} from './webhooks';
