/**
 * The owner segment and job channel on the server (node:crypto, synchronous): what the publisher publishes to.
 * Equal to ./channel.ts `ownerSegmentOf` (WebCrypto) and to the onSubscribe handler's
 * ./subscribe-rules.ts `ownerSegmentOfBase64` for every subject (test/realtime/subscribe-rules.test.ts).
 */
import { createHash } from 'node:crypto';
import { OWNER_SEGMENT_LENGTH, jobChannel } from './channel.ts';

/** The owner segment of `sub`: the first 40 hex digits of SHA-256 over its UTF-8 bytes. */
export function ownerSegmentOfSubjectSync(sub: string): string {
  return createHash('sha256').update(sub, 'utf8').digest('hex').slice(0, OWNER_SEGMENT_LENGTH);
}

/**
 * The channel of job `jobId` owned by `userId`.
 * @throws RangeError when `jobId` is not a job id
 */
export function channelOfJob(userId: string, jobId: string): string {
  return jobChannel(ownerSegmentOfSubjectSync(userId), jobId);
}

/** `util.base64Encode` as APPSYNC_JS defines it (UTF-8, then standard base64), for the rules run in Node. */
export function utf8Base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
