/**
 * What a call will take, before it is made: the prompt's tokens, estimated two ways.
 *
 * - {@link estimatePromptTokens} — for the minute windows (RPM/TPM): four characters a token, rounded up per
 *   message, plus {@link MESSAGE_OVERHEAD_TOKENS} per message for the chat template. OpenAI's rule of thumb for
 *   English; providers count their own tokens, so a window is an estimate whatever we do, and a low estimate
 *   costs at worst a 429, which the cooldown handles. No tokenizer library is used: DeepSeek's tokenizer is not
 *   published on npm, and OpenAI's (tiktoken ports) would be as wrong for it as this rule.
 * - {@link promptTokensBound} — for money: an UPPER bound, so a reservation can never be short of the cost. A
 *   byte-level BPE tokenizer (DeepSeek's, OpenAI's, most current ones) turns every token into at least one byte
 *   of UTF-8, so a text has at most as many tokens as bytes; the chat template adds a few special tokens per
 *   message ({@link MESSAGE_BOUND_TOKENS}). About 4× the estimate for English, less for other scripts.
 *
 * The output part of both is the call's `max_tokens` (the model's `maxOutputTokens` unless the request sets
 * one): the provider never returns more.
 */
import type { ChatMessage } from '../ai/types.ts';

/** Chat-template tokens per message in the window estimate (role markers, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Chat-template tokens per message in the bound, and once more for the reply's priming. */
export const MESSAGE_BOUND_TOKENS = 16;

/** The prompt's tokens as a rate window counts them (an estimate). */
export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + Math.ceil(m.content.length / 4) + MESSAGE_OVERHEAD_TOKENS, 0);
}

/** At least the prompt's real token count on any byte-level tokenizer (what money is reserved for). */
export function promptTokensBound(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + Buffer.byteLength(m.content, 'utf8') + MESSAGE_BOUND_TOKENS, MESSAGE_BOUND_TOKENS);
}
