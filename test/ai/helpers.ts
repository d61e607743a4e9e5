/**
 * Helpers for the AI-layer suites: credential sets over fixed keys and providers pointed at a mock server.
 */
import { OpenAiCompatibleProvider } from '../../lib/ai/openai-compatible-provider.ts';
import type { ChatRequest, CredentialSet } from '../../lib/ai/types.ts';
import type { CredentialMode } from '../../lib/db/generated/enums.ts';

/** A credential holding exactly `keys` (provider → key). */
export function credentialsWith(keys: Record<string, string>, mode: CredentialMode = 'platform_key'): CredentialSet {
  return { mode, keyFor: (provider) => keys[provider] };
}

/** A provider named `name` calling the mock at `url`. */
export function mockProvider(name: string, url: string, timeoutMs = 5_000): OpenAiCompatibleProvider {
  return new OpenAiCompatibleProvider({ name, baseURL: url, timeoutMs });
}

/** A JSON-mode request whose user message is `text` (put scenario markers in it). */
export function chat(text: string): ChatRequest {
  return {
    jsonMode: true,
    messages: [
      { role: 'system', content: 'Reply with a JSON object.' },
      { role: 'user', content: text },
    ],
  };
}

export { rejectionOf } from '../helpers/assertions.ts';
