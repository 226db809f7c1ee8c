/**
 * Configuration fields every Hugging Face Hub section shares (`release.hub`, `resilience.hub`,
 * `resilience_eval.input.hub`, a model's `source: hub`), defined once so a fix to one (the
 * repository id rule, the default URL) lands in all of them. Zod schemas only; no I/O.
 */
import { z } from 'zod';

/** The public Hub. */
export const HUB_URL = 'https://huggingface.co';

/** Hub base URL (`hubUrl` of `@huggingface/hub`; tests point it at the local Hub server). */
export const hubUrlField = z.url().default(HUB_URL);

/** A Hub repository id, `owner/name` (letters, digits, `_`, `.`, `-`). */
export const hubRepoIdField = z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'owner/name');

/** Branch, tag or commit sha; pin a commit for reproducible runs. */
export const hubRevisionField = z.string().min(1).default('main');

/**
 * Milliseconds one Hub request may take, the body of a downloaded file included (a hang guard,
 * sized for a multi-MB file on a slow link).
 */
export const hubTimeoutField = z.number().int().min(1).default(300_000);
