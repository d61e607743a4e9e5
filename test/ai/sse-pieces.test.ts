import { describe, expect, it } from 'vitest';
import { inPieces, pieceEnds } from '../../lib/ai/sse-pieces.ts';

const encoder = new TextEncoder();
const event = (i: number) => `data: {"id":"c","choices":[{"delta":{"content":"tok${i}"}}]}\n\n`;

async function read(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const piece of stream) out.push(piece);
  return out;
}

describe('event-stream pieces', () => {
  it('cuts a large chunk only just after blank lines, into pieces of about the size asked, losing no byte', () => {
    const text = Array.from({ length: 400 }, (_, i) => event(i)).join('');
    const bytes = encoder.encode(text);
    const ends = pieceEnds(bytes, 1024);
    expect(ends.at(-1)).toBe(bytes.length);
    let start = 0;
    for (const end of ends) {
      expect(end).toBeGreaterThan(start);
      if (end < bytes.length) {
        expect(text.slice(end - 2, end)).toBe('\n\n');
        expect(end - start).toBeGreaterThanOrEqual(1024);
        expect(end - start).toBeLessThan(1024 + event(399).length);
      }
      start = end;
    }
    expect(ends.length).toBeGreaterThan(bytes.length / (1024 + 80));
  });

  it('passes a chunk with no event boundary, or a small one, whole', () => {
    const noBoundary = encoder.encode(`data: ${'x'.repeat(5000)}\r\n`);
    expect(pieceEnds(noBoundary, 1024)).toEqual([noBoundary.length]);
    const crlf = encoder.encode(Array.from({ length: 100 }, (_, i) => event(i).replace(/\n/g, '\r\n')).join(''));
    expect(pieceEnds(crlf, 1024)).toEqual([crlf.length]);
  });

  it('streams the same bytes in the same order, views of the chunks it was given', async () => {
    const chunks = [event(1), Array.from({ length: 300 }, (_, i) => event(i)).join('') + 'data: partial', ' rest\n\n', event(2)];
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(encoder.encode(c));
        controller.close();
      },
    });
    const pieces = await read(inPieces(source, 512));
    expect(pieces.length).toBeGreaterThan(chunks.length);
    expect(new TextDecoder().decode(Buffer.concat(pieces))).toBe(chunks.join(''));
  });
});
