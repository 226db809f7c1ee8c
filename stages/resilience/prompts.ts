/**
 * Versioned prompt templates of TeleResilienceBench (`config/prompts/resilience/prompts.yaml`).
 * Templates are plain text with `{QUESTION}`, `{OPTIONS}`, `{NUM_OPTIONS}` and `{HALF_TRACE}`;
 * the registry says which are the paper's text and which are reconstructed (paper Appendix A
 * prints only the continuation template).
 */
import { readFileSync, existsSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { z } from 'zod';
import { loadConfigFile } from '../../pipeline/config/load.js';
import { ConfigError } from '../../pipeline/errors.js';
import { sha256 } from '../../pipeline/hash.js';

const PLACEHOLDERS = ['QUESTION', 'OPTIONS', 'NUM_OPTIONS', 'HALF_TRACE'] as const;

export const promptRegistrySchema = z.strictObject({
  version: z.literal(1),
  templates: z.record(
    z.string().regex(/^[a-z0-9-]+$/),
    z.strictObject({
      file: z.string().min(1),
      /** Stable version label recorded with every instance (`tele_resilience_base_mc_v1_...`). */
      version: z.string().min(1),
      kind: z.enum(['mc', 'numeric']),
      /** `paper`: verbatim from the paper; `reconstructed`: rebuilt from quotes (see `source`). */
      provenance: z.enum(['paper', 'reconstructed']),
      source: z.string().min(1),
    }),
  ),
});

/** A loaded template. */
export interface PromptTemplate {
  name: string;
  version: string;
  kind: 'mc' | 'numeric';
  provenance: 'paper' | 'reconstructed';
  /** Template text (one trailing newline of the file removed). */
  text: string;
  /** sha256 of `text`: changes whenever the wording changes. */
  sha256: string;
}

/**
 * Loads every template of the registry in `dir`.
 * @param dir absolute folder holding `prompts.yaml` and the template files
 * @throws ConfigError when the registry or a template file is missing, or a template uses an
 *   unknown `{PLACEHOLDER}`
 */
export function loadPromptTemplates(dir: string): Map<string, PromptTemplate> {
  const file = resolve(dir, 'prompts.yaml');
  const reg = loadConfigFile(file, promptRegistrySchema);
  const out = new Map<string, PromptTemplate>();
  for (const [name, t] of Object.entries(reg.templates)) {
    const path = resolve(dirname(file), t.file);
    if (!existsSync(path)) {
      throw new ConfigError(
        `prompt template file ${path} (templates.${name}.file in ${file}) does not exist`,
        {
          file,
          path: `templates.${name}.file`,
        },
      );
    }
    const text = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    for (const m of text.matchAll(/\{([A-Z_]+)\}/g)) {
      if (!(PLACEHOLDERS as readonly string[]).includes(m[1]!)) {
        throw new ConfigError(
          `prompt template ${path} uses unknown placeholder {${m[1]}} (known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')})`,
          { file: path },
        );
      }
    }
    out.set(name, {
      name,
      version: t.version,
      kind: t.kind,
      provenance: t.provenance,
      text,
      sha256: sha256(text),
    });
  }
  return out;
}

/**
 * Picks a template by name and checks its kind.
 * @throws ConfigError when missing or of the wrong kind
 */
export function requireTemplate(
  templates: Map<string, PromptTemplate>,
  name: string,
  kind: 'mc' | 'numeric',
  where: string,
): PromptTemplate {
  const t = templates.get(name);
  if (!t) {
    throw new ConfigError(
      `${where} names prompt template "${name}", which is not in prompts.yaml (known: ${[...templates.keys()].join(', ')})`,
      { path: where },
    );
  }
  if (t.kind !== kind) {
    throw new ConfigError(`${where}: template "${name}" is for ${t.kind} items, expected ${kind}`, {
      path: where,
    });
  }
  return t;
}

/**
 * Options as the prompts list them: one line per option, `1. text`. Options that already carry
 * their own number (ORAN-Bench-13K and srsRANBench publish `["1. O-RAN.WG3", "2. ...", ...]`: every
 * option i starting with `i. `) are listed as published, not numbered twice (`1. 1. O-RAN.WG3`
 * confused the generator: SmolLM2 answered `3. O-RAN.WG5`, mixing the two numbers).
 * @param choices the option texts, as the item keeps them
 * @returns the lines joined with `\n`
 */
export function renderOptions(choices: readonly string[]): string {
  const selfNumbered = choices.length > 0 && choices.every((c, i) => c.startsWith(`${i + 1}. `));
  return choices.map((c, i) => (selfNumbered ? c : `${i + 1}. ${c}`)).join('\n');
}

/**
 * Fills a template. Every placeholder is replaced in one pass, so text inside a value (a question
 * that contains "{OPTIONS}") is never substituted again.
 * @param values QUESTION, OPTIONS (pre-rendered), NUM_OPTIONS, HALF_TRACE as needed
 * @throws ConfigError when the template uses a placeholder that `values` does not give
 */
export function renderTemplate(
  template: PromptTemplate,
  values: Partial<Record<(typeof PLACEHOLDERS)[number], string>>,
): string {
  return template.text.replace(/\{([A-Z_]+)\}/g, (whole, key: string) => {
    const v = values[key as (typeof PLACEHOLDERS)[number]];
    if (v === undefined) {
      throw new ConfigError(
        `prompt template "${template.name}" needs {${key}}, which this item does not provide`,
      );
    }
    return v;
  });
}
