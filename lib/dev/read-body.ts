/** Reading a local server's request body with a size bound (the local gateway, the realtime hub, the mock provider). */
import type { IncomingMessage } from 'node:http';

/** The whole body, or undefined once it passes `maxBytes` (the rest is not read into memory). */
export async function readBodyUpTo(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
