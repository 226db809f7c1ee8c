/**
 * Lazy loading of heavy packages, so that `telebench --help` or `status` does not pay for the
 * Docker, GitHub, Hub, Parquet and tokenizer clients it never uses (the bundle's start time is
 * measured in `bench/cli-start.bench.ts`). `lazy('dockerode')` returns a function that loads the
 * package on its first call and returns the same module object afterwards.
 *
 * The package is resolved as `import` resolves it (`import.meta.resolve`, the ES module build of a
 * dual package) and loaded with `require`, which loads ES modules synchronously on Node >= 20.19:
 * so a lazily loaded package is the very module instance a static `import` elsewhere gets (no
 * second copy of its classes: `instanceof HubApiError` holds across both). An ES module comes back
 * as its namespace (`.default` for a default export); a CommonJS one as its `module.exports`.
 *
 * Use it only for packages a command may not need; keep `import type` for their types.
 * @throws whatever `require` throws (MODULE_NOT_FOUND when the package is not installed)
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const load = createRequire(import.meta.url);

function resolveAsImport(id: string): string {
  try {
    const url = import.meta.resolve(id);
    return url.startsWith('file:') ? fileURLToPath(url) : id;
  } catch {
    return id; // left to require, which names the missing package
  }
}

/** A loader of package `id`: `() => module` (loaded once, on first call). */
export function lazy<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= load(resolveAsImport(id)) as T);
}
