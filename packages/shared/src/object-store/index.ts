/**
 * The object store: its port (port.ts) and the adapters behind it: a directory on disk for the standalone mode
 * (directory-object-store.ts), S3 through minio (minio-object-store.ts), chosen by object-store-factory.ts.
 */
export * from './port';
export * from './directory-object-store';
export * from './minio-object-store';
export * from './object-store-factory';
