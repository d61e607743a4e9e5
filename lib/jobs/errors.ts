/**
 * Typed failures of the jobs capability (ADR-003 §2, §5.2). Classify with `instanceof`; `code` is stable
 * and public, `message` is safe to show users. Lifecycle transition failures live in `lifecycle-errors.ts`.
 *
 * Sections: shared issue helpers · job definitions and the registry · job input, snapshots and hashing.
 * Append new errors to the section they belong to, or add a section at the end.
 */
import { EngineError } from '../errors.ts';

// ── Shared issue helpers ────────────────────────────────────────────────────────────────────────────

/** One problem found while validating a value: where (see {@link formatPath}) and what. */
export interface IssueDetail {
  path: string;
  message: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * A path into a value as one string: `items[0].name`, `["a.b"].c`; the root is the empty string.
 * Used by validation issues, redacted paths and canonical-JSON errors so they all read the same.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/** Zod's issues (any version, structurally) as {@link IssueDetail}s. */
export function toIssueDetails(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): IssueDetail[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

function describeIssues(issues: readonly IssueDetail[]): string {
  return issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ');
}

// ── Job definitions and the registry ────────────────────────────────────────────────────────────────

/** No definition is registered for this job type: a caller typo, or a type removed while jobs still exist. */
export class UnknownJobTypeError extends EngineError {
  readonly code = 'UNKNOWN_JOB_TYPE';
  constructor(readonly jobType: string) {
    super(`Unknown job type "${jobType}"`);
  }
}

/** Two definitions claim the same job type; raised at registration, so at process start. */
export class DuplicateJobDefinitionError extends EngineError {
  readonly code = 'DUPLICATE_JOB_DEFINITION';
  constructor(readonly jobType: string) {
    super(`Job type "${jobType}" is already registered`);
  }
}

/** A definition broke a registration rule (ADR-003 §2.2); `issues` name every offending field. */
export class InvalidJobDefinitionError extends EngineError {
  readonly code = 'INVALID_JOB_DEFINITION';
  constructor(
    readonly jobType: string,
    readonly issues: readonly IssueDetail[],
  ) {
    super(`Job definition "${jobType}" is invalid: ${describeIssues(issues)}`);
  }

  /** The offending paths, e.g. `['execution.timeoutMs']`. */
  get paths(): string[] {
    return this.issues.map((i) => i.path);
  }
}

// ── Job input, snapshots and hashing ────────────────────────────────────────────────────────────────

/**
 * A job's input failed its definition's input schema. Not retryable: the same input fails again.
 * The message and `issues` hold field paths and zod's messages, never the offending values.
 */
export class InputValidationError extends EngineError {
  readonly code = 'VALIDATION_FAILED';
  constructor(
    readonly jobType: string,
    readonly issues: readonly IssueDetail[],
    options?: { cause?: unknown },
  ) {
    super(`Input for job type "${jobType}" is invalid: ${describeIssues(issues)}`, options);
  }
}

/** What kind of value canonical JSON refused. */
export type CanonicalJsonProblem =
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'non-finite number'
  | 'non-plain object'
  | 'circular reference'
  | 'too deep';

/** A value cannot be hashed as canonical JSON (it is not plain JSON, is circular, or nests too deep). */
export class CanonicalJsonError extends EngineError {
  readonly code = 'INVALID_JSON_VALUE';
  constructor(
    readonly problem: CanonicalJsonProblem,
    readonly path: string,
  ) {
    super(`Value at ${path || '(root)'} is not canonical JSON: ${problem}`);
  }
}

/** A snapshot nests deeper or holds more values than the redactor walks; the job input is refused. */
export class SnapshotLimitError extends EngineError {
  readonly code = 'SNAPSHOT_LIMIT_EXCEEDED';
  constructor(
    readonly limit: 'depth' | 'nodes',
    readonly max: number,
    readonly path: string,
  ) {
    super(`Job input exceeds the snapshot ${limit} limit of ${max}${path ? ` at ${path}` : ''}`);
  }
}
