/**
 * One error class for the whole project. Every error a stage or provider throws on purpose is a
 * {@link TelebenchError} with a stable `code`, a `tier` that tells the runner what to do with it,
 * and a `context` object naming what and where (file, row, repository, URL, ...).
 *
 * Tiers (after inspect_ai and vercel/ai):
 * - `rate-limit`  an outside service asked us to wait; providers wait themselves, this tier only
 *                 escapes when waiting was impossible. Recorded as a failed item, retried by
 *                 `--retry-failed`.
 * - `transient`   network blips, 5xx; retried inside providers, then recorded as failed.
 * - `infra`       Docker build broke, disk full, a container was killed; failed, retryable.
 * - `content`     the item itself says no (no linked issue, test does not flip): the item is
 *                 recorded as *skipped* with `code` as its reason, never as an error.
 * - `config`      the user's configuration or input file is wrong: aborts before any item starts
 *                 (exit code 2).
 * - `preflight`   an outside service or input is missing: the stage is stopped before it starts
 *                 (exit code 3); the message says what to start or set.
 * - `bug`         anything else: failed, with a stack.
 */
export type ErrorTier =
  'rate-limit' | 'transient' | 'infra' | 'content' | 'config' | 'preflight' | 'bug';

export class TelebenchError extends Error {
  readonly code: string;
  readonly tier: ErrorTier;
  readonly context: Record<string, unknown>;

  /**
   * @param code    stable machine-readable code, snake_case (`toolchain_mismatch`, `no_linked_issue`)
   * @param message human sentence that names what went wrong and where
   * @param options tier (default `bug`), context (JSON-serialisable), cause
   */
  constructor(
    code: string,
    message: string,
    options: { tier?: ErrorTier; context?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TelebenchError';
    this.code = code;
    this.tier = options.tier ?? 'bug';
    this.context = options.context ?? {};
  }

  /** JSON shape stored in the `error` column of an item: `{code, tier, message, context, stack}`. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      tier: this.tier,
      message: this.message,
      context: this.context,
      stack: this.stack,
    };
  }
}

/**
 * Thrown by a stage's `run` when the item is a legitimate "no" for content reasons. The runner
 * records the item as `skipped` with `reason` (a snake_case code shown in the funnel) and `detail`;
 * it is never retried and never counted as a failure.
 */
export class SkipItem extends TelebenchError {
  /**
   * @param reason snake_case reason code (`no_linked_issue`, `f2p_does_not_fail_at_parent`)
   * @param detail human sentence; `data` is stored with the skip for `telebench show`
   */
  constructor(reason: string, detail: string, data: Record<string, unknown> = {}) {
    super(reason, detail, { tier: 'content', context: data });
    this.name = 'SkipItem';
  }
}

/**
 * Thrown by `Stage.preflight` when an outside service or input the stage needs is missing.
 * `service` names it (`docker`, `github`, `ollama http://127.0.0.1:11434`, `file ../shared/data`)
 * and `hint` says what to start, pull or set.
 */
export class PreflightError extends TelebenchError {
  readonly service: string;
  readonly hint: string;
  /**
   * @param service what is missing (`docker`, `ollama http://127.0.0.1:11434`, `file ../shared/data`)
   * @param message what the preflight found, as a sentence
   * @param hint what to start, pull or set so that a rerun gets past the preflight
   * @param cause the underlying error (connection refused, 404, ...), kept for `show`
   */
  constructor(service: string, message: string, hint: string, cause?: unknown) {
    super('preflight_failed', message, { tier: 'preflight', context: { service, hint }, cause });
    this.name = 'PreflightError';
    this.service = service;
    this.hint = hint;
  }
}

/**
 * A configuration or input-file error. `file` and `path` (dotted, with `[i]` for arrays, e.g.
 * `github.repos[3].name`) say where; `line` when known. Exit code 2.
 */
export class ConfigError extends TelebenchError {
  /**
   * @param message names the file, the path in it and what was expected
   * @param context `file` (absolute), `path` (`a.b[3].c`) and `line` (1-based) when known
   */
  constructor(message: string, context: { file?: string; path?: string; line?: number } = {}) {
    super('config_invalid', message, { tier: 'config', context });
    this.name = 'ConfigError';
  }
}

/** Normalises anything thrown into a TelebenchError (unknown errors become tier `bug`). */
export function asTelebenchError(err: unknown): TelebenchError {
  if (err instanceof TelebenchError) return err;
  if (err instanceof Error) {
    const e = new TelebenchError('unexpected_error', err.message, { tier: 'bug', cause: err });
    e.stack = err.stack;
    return e;
  }
  return new TelebenchError('unexpected_error', String(err), { tier: 'bug' });
}

/**
 * The message of `err` followed by those of its `cause` chain (at most 3 deep, repeats left out):
 * Node's fetch says only `fetch failed`, and why (`getaddrinfo ENOTFOUND huggingface.co`,
 * `connect ECONNREFUSED 127.0.0.1:8080`) is in its cause.
 * @returns `fetch failed: getaddrinfo ENOTFOUND huggingface.co`; `String(err)` for a non-Error
 */
export function messageWithCauses(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const parts: string[] = [err.message];
  let c: unknown = err.cause;
  for (let i = 0; i < 3 && c instanceof Error; i++, c = c.cause)
    if (c.message && !parts.some((p) => p.includes(c instanceof Error ? c.message : '')))
      parts.push(c.message);
  return parts.join(': ');
}
