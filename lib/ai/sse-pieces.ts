/**
 * A `fetch` for the `openai` SDK that hands a Server-Sent Events body to the SDK in pieces of a few events each.
 *
 * Why: the SDK's SSE reader (`iterSSEChunks` in openai/core/streaming) appends each network chunk to a buffer and,
 * per event found, copies the rest of the buffer (`data = data.slice(index)`): a chunk carrying n events costs
 * O(n × chunk size). A provider that writes a whole answer at once (a cached answer, a fast local model, the mock
 * unpaced) or a network that coalesces many small writes into one read gives it chunks of hundreds of events,
 * where that copying was the consumer's largest CPU cost. Cut at event boundaries into pieces of about
 * {@link PIECE_BYTES}, each piece costs O(events in it × piece size): linear in the stream's length.
 *
 * Invariants: the bytes are the provider's, in order, none added, dropped or changed (cuts fall only just after
 * a blank line, `\n\n`, which ends an event in every line-ending style the SDK reads except `\r\r`; a chunk
 * without one passes whole). Only `text/event-stream` bodies are touched; every other response, error and abort
 * is the wrapped fetch's own.
 */

/** About how many bytes a piece carries before the next event boundary cuts it. */
export const PIECE_BYTES = 2048;

const LF = 0x0a;

/** The end offsets of the pieces of `chunk`: after `\n\n` boundaries, about every `pieceBytes`, and its end. */
export function pieceEnds(chunk: Uint8Array, pieceBytes = PIECE_BYTES): number[] {
  const ends: number[] = [];
  let start = 0;
  for (let i = chunk.indexOf(LF, pieceBytes - 1); i >= 0 && i < chunk.length - 1; i = chunk.indexOf(LF, i + 1)) {
    if (chunk[i + 1] !== LF) continue;
    if (i + 2 - start < pieceBytes) continue;
    ends.push(i + 2);
    start = i + 2;
    i = start + pieceBytes - 2; // the next cut is at least pieceBytes on: search from there
  }
  if (start < chunk.length) ends.push(chunk.length);
  return ends;
}

/** A stream of `body`'s bytes cut as {@link pieceEnds} says (views of the same memory: nothing is copied). */
export function inPieces(body: ReadableStream<Uint8Array>, pieceBytes = PIECE_BYTES): ReadableStream<Uint8Array> {
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (chunk.length <= pieceBytes) {
        controller.enqueue(chunk);
        return;
      }
      let start = 0;
      for (const end of pieceEnds(chunk, pieceBytes)) {
        controller.enqueue(chunk.subarray(start, end));
        start = end;
      }
    },
  }));
}

/** `fetchImpl` whose event-stream response bodies arrive {@link inPieces}. */
export function fetchWithEventPieces(fetchImpl: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
    return new Response(inPieces(response.body), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
