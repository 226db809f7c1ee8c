/**
 * Turns generated files into a git-style unified diff (the `f2p_test_patch` of a TestGen record),
 * using the `diff` package. New files get `new file mode` headers so `git apply` creates them.
 */
import type * as jsdiffTypes from 'diff';
import type { GeneratedFile } from './emit.js';
import { lazy } from '../../../pipeline/lazy.js';

const jsdiff = lazy<typeof jsdiffTypes>('diff');

/** Unified diff (git format, `a/` `b/` prefixes) that turns each file's `before` into `content`. */
export function toGitPatch(files: GeneratedFile[]): string {
  const parts: string[] = [];
  for (const f of files) {
    const isNew = f.before === null;
    const body = jsdiff().createTwoFilesPatch(
      isNew ? '/dev/null' : `a/${f.path}`,
      `b/${f.path}`,
      f.before ?? '',
      f.content,
      '',
      '',
      {
        context: 3,
      },
    );
    // drop the "Index:"/"====" preamble of `diff`, keep from the --- line on
    const lines = body.split('\n');
    const start = lines.findIndex((l) => l.startsWith('--- '));
    const hunk = lines
      .slice(start)
      .map((l) => (l.startsWith('--- ') || l.startsWith('+++ ') ? l.replace(/\t.*$/, '') : l))
      .join('\n');
    parts.push(
      `diff --git a/${f.path} b/${f.path}\n${isNew ? 'new file mode 100644\n' : ''}${hunk}`,
    );
  }
  return parts.join('').replace(/\n*$/, '\n');
}
