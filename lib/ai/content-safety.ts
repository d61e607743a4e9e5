/**
 * Content safety for job types whose definition sets `security.contentSafetyCheck`: the engine checks the
 * rendered input before the provider call and the model's output after it. The checker is pluggable (any
 * {@link ContentSafetyChecker}); the default is a small rule-based one: a coarse first line against the most
 * clear-cut abuse, not a moderation model. Plug a real classifier (e.g. a moderation endpoint) for more.
 */
import { ContentSafetyError } from '../jobs/failures.ts';

/** Which text is being checked. */
export type SafetyPhase = 'input' | 'output';

/** Refuses unsafe text by throwing; resolves when the text may pass. */
export interface ContentSafetyChecker {
  /** @throws ContentSafetyError (not retryable); its message names the rule and phase, never the text. */
  check(text: string, phase: SafetyPhase): Promise<void>;
}

/** One refusal rule: a stable id (recorded in the error), why it exists, and the pattern that triggers it. */
export interface SafetyRule {
  id: string;
  description: string;
  pattern: RegExp;
  /** Phases the rule applies to; both when absent. */
  phases?: readonly SafetyPhase[];
}

/** The rule that refused a text, for logs and the admin view (the text itself is never included). */
export class ContentSafetyRefusal extends ContentSafetyError {
  constructor(readonly ruleId: string, readonly phase: SafetyPhase) {
    super(`Content safety rule "${ruleId}" refused the ${phase}`);
  }
}

const MINOR = String.raw`(?:child|children|kids?|minors?|underage|preteens?|\d{1,2}[- ]?(?:yo|years?[- ]old))`;
/** A few words between an intent and its object: close enough to be one request, not a whole paragraph. */
const GAP = String.raw`\s+(?:[\w'-]+\s+){0,3}?`;
const SEXUAL = String.raw`(?:porn\w*|erotic\w*|sexually explicit|nude (?:photos?|pics?|pictures?|images?|videos?))\b`;

/**
 * The default rules. Each pairs an intent (instructions, production, sexualisation) with a narrow object, so
 * that discussing a topic (history, prevention, fiction summaries) passes and asking for harm does not.
 * Keep the list short and reviewed: every rule here can refuse a paying user's job.
 */
export const DEFAULT_SAFETY_RULES: readonly SafetyRule[] = Object.freeze([
  {
    id: 'self_harm_instructions',
    description: 'Asks for or gives methods of suicide or self-harm.',
    pattern: new RegExp(
      String.raw`\b(?:how (?:do i|can i|to|should i)|(?:best|easiest|quickest|painless) ways? to|methods? (?:of|to|for))` +
        GAP +
        String.raw`(?:kill (?:myself|yourself)|commit suicide|end (?:my|your) (?:own )?life|(?:hurt|cut) (?:myself|yourself))\b`,
      'i',
    ),
  },
  {
    id: 'weapons_synthesis',
    description: 'Asks for or gives how to make chemical, biological or explosive weapons.',
    pattern: new RegExp(
      String.raw`\b(?:synthesi[sz]e|synthesis of|make|making|build|building|manufacture|manufacturing|produce|producing|weaponi[sz]e)` +
        GAP +
        String.raw`(?:sarin|tabun|soman|vx|nerve agents?|mustard gas|ricin|anthrax|botulinum toxin|(?:pipe|nail|car) bombs?|explosive devices?|ieds?)\b`,
      'i',
    ),
  },
  {
    id: 'sexual_minors',
    description: 'Sexualised content involving minors (CSAM). Sex education and abuse prevention pass.',
    pattern: new RegExp(
      String.raw`\b${MINOR}\b[^.?!\n]{0,30}\b${SEXUAL}|\b${SEXUAL}[^.?!\n]{0,30}\b${MINOR}\b|\b(?:lolicon|shotacon)\b`,
      'i',
    ),
  },
]);

/** Refuses a text that matches any of its rules (first match wins). */
export class RuleBasedContentSafetyChecker implements ContentSafetyChecker {
  readonly rules: readonly SafetyRule[];

  constructor(rules: readonly SafetyRule[] = DEFAULT_SAFETY_RULES) {
    this.rules = rules;
  }

  async check(text: string, phase: SafetyPhase): Promise<void> {
    const rule = this.rules.find((r) => (r.phases ?? ['input', 'output']).includes(phase) && matches(r.pattern, text));
    if (rule) throw new ContentSafetyRefusal(rule.id, phase);
  }
}

/** `pattern.test` without the `lastIndex` state a global or sticky regex keeps between calls. */
function matches(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0;
  return pattern.test(text);
}

/** Runs several checkers in order (e.g. the rules, then a moderation endpoint); the first refusal wins. */
export function allOfCheckers(...checkers: readonly ContentSafetyChecker[]): ContentSafetyChecker {
  return {
    async check(text, phase) {
      for (const checker of checkers) await checker.check(text, phase);
    },
  };
}

/** The checker the engine uses unless another is plugged in. */
export const defaultContentSafetyChecker: ContentSafetyChecker = new RuleBasedContentSafetyChecker();
