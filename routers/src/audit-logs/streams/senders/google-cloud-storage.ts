import type { DestinationConfig, DestinationCredentials } from '../destinations.ts';
import { putObjectRequest } from './object-storage.ts';
import type { Batch, OutgoingRequest } from './request.ts';

/**
 * Google Cloud Storage through its XML API's interoperability with HMAC keys: as S3, signed with
 * SigV4 for region `auto`, at `https://storage.googleapis.com` unless `endpoint` is set.
 */
export function googleCloudStorageRequest(
  config: DestinationConfig<'GoogleCloudStorage'>,
  credentials: DestinationCredentials<'GoogleCloudStorage'>,
  batch: Batch,
): Promise<OutgoingRequest> {
  return putObjectRequest(
    {
      endpoint: config.endpoint ?? 'https://storage.googleapis.com',
      bucket: config.bucket,
      region: 'auto',
      prefix: config.prefix,
      accessKeyId: credentials.access_key_id,
      secretAccessKey: credentials.secret_access_key,
    },
    batch,
  );
}
