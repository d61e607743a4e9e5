/**
 * The per-request markers of the local mock provider: bracketed tags in the last user message that pick its
 * behaviour for that request (a real model ignores them). The table of what each does is in ./mock-ai-server.ts.
 */
import type { ChatMessage } from '../ai/types.ts';

const MARKER = /\[(scenario|sleep|tps|first_token):([^\]]*)\]/g;

/** What the markers of one request ask for; a key is present only when its marker is (and well-formed). */
export interface MockMarkers {
  scenario?: string;
  sleepMs?: number;
  /** `[tps:<n>]`: the streamed answer's pace, tokens a second. */
  tokensPerSecond?: number;
  /** `[first_token:<ms>]`: the wait before the streamed answer's first token. */
  firstTokenMs?: number;
}

/** The markers in `text`; the last of each kind wins. Malformed numbers are ignored. */
export function parseMarkers(text: string): MockMarkers {
  const found: MockMarkers = {};
  for (const [, kind, value = ''] of text.matchAll(MARKER)) {
    if (kind === 'scenario') found.scenario = value;
    else if (kind === 'sleep' && /^\d+$/.test(value)) found.sleepMs = Number(value);
    else if (kind === 'tps' && /^\d+(\.\d+)?$/.test(value)) found.tokensPerSecond = Number(value);
    else if (kind === 'first_token' && /^\d+$/.test(value)) found.firstTokenMs = Number(value);
  }
  return found;
}

/** `text` without its markers. */
export function stripMarkers(text: string): string {
  return text.replace(MARKER, '').trim();
}

/** The last user message's text ('' when there is none). */
export function lastUserText(messages: readonly ChatMessage[]): string {
  return messages.findLast((m) => m.role === 'user')?.content ?? '';
}
