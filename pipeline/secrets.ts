/**
 * Secrets come from environment variables only and never reach logs, cache keys or the store.
 * {@link redact} replaces every known secret value in a string with `***`.
 */

/** Environment variables that hold secrets. Providers read them through {@link secret}. */
export const SECRET_ENV_VARS = [
  'GITHUB_TOKEN',
  'GITHUB_TOKENS',
  'HF_TOKEN',
  'OPENAI_API_KEY',
  'TELEBENCH_LLM_API_KEY',
] as const;
export type SecretName = (typeof SECRET_ENV_VARS)[number];

/** Value of a secret variable, or undefined when unset or empty. */
export function secret(name: SecretName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function secretValues(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const name of SECRET_ENV_VARS) {
    const v = env[name];
    if (!v) continue;
    for (const part of v.split(/[,\s]+/)) if (part.length >= 6) out.push(part);
  }
  return out;
}

/** Replaces every secret value found in `text` by `***`. */
export function redact(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let out = text;
  for (const s of secretValues(env)) out = out.split(s).join('***');
  return out;
}
