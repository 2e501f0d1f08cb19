import type { DestinationConfig, DestinationCredentials } from '../destinations.ts';
import { putObjectRequest } from './object-storage.ts';
import type { Batch, OutgoingRequest } from './request.ts';

/** S3 (or an S3-compatible store at `endpoint`): one JSON-lines object per batch. */
export function s3Request(
  config: DestinationConfig<'S3'>,
  credentials: DestinationCredentials<'S3'>,
  batch: Batch,
): Promise<OutgoingRequest> {
  return putObjectRequest(
    {
      endpoint: config.endpoint ?? `https://s3.${config.region}.amazonaws.com`,
      bucket: config.bucket,
      region: config.region,
      prefix: config.prefix,
      accessKeyId: credentials.access_key_id,
      secretAccessKey: credentials.secret_access_key,
    },
    batch,
  );
}
