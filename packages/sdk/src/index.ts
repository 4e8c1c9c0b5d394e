export * from './types';
export { VisionClient, SDK_VERSION } from './client';
export type {
  VisionClientOptions,
  CreateOptions,
  UploadOptions,
  CreatedTask,
  ListTasksOptions,
} from './client';
export { VisionApiError, VisionNetworkError, VisionTimeoutError } from './errors';
export type { UploadSource, UploadData, UploadProgress, ProgressCallback } from './multipart';
export type { RetryOptions } from './retry';
export type { ResultsOptions } from './results';
export type { FollowOptions } from './stream';
export type { WaitOptions } from './wait';
export { WebhooksApi, verifyWebhook } from './webhooks';
export type {
  WebhookEventType,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookDelivery,
  WebhookEvent,
  DeliveryPage,
} from './webhooks';
