/**
 * The source context the solver sees with the problem statement (paper, "Agent paradigms": the
 * model "receives the full problem statement and source code"). A whole NF repository does not fit
 * a prompt, so the code is chosen by this rule, from the problem statement and the tree at
 * `base_commit` only — never from the gold patch or its file list (the solver must find the bug):
 *
 *  1. Candidate files: the repository's source files of the instance's language, test files
 *     (`isTestPath`), `vendor/`, `testdata/` and hidden folders excluded.
 *  2. Signals read from the problem statement (its stack trace included):
 *     a. paths (`internal/ngap/handler.go`, `handler.go:1775`) and directories (`internal/ngap`)
 *        of the tree named in the text (a named file names its directory too);
 *     b. function names of stack frames (`ngap.handleUplinkRANConfigurationTransferMain(...)`,
 *        `(*Processor).GenerateAuthDataProcedure`);
 *     c. identifiers: words of at least `min_identifier_length` characters with an inner capital,
 *        a digit or an underscore (`SequenceNumber`, `UplinkRANConfigurationTransfer`).
 *  3. Files are cut into top-level declarations (a line at column 0 that starts a declaration up
 *     to the next one: Go `func`/`type`/`var`/`const`, C and Python definitions).
 *  4. Each declaration scores 5 per stack-frame function it defines, 1 per distinct identifier it
 *     contains, +2 when its file was named and +1 when its directory was; declarations scoring
 *     more than 0 are taken best first until `max_tokens` cl100k tokens, then printed in file and line
 *     order, each under a heading with its path and line range. When nothing scores, the context lists the source
 *     folders only (the model must ask through its answer; single-turn has no second chance).
 * Every chosen declaration records why it was chosen.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { countCl100k } from '../../../pipeline/providers/tokenizer/cl100k.js';
import { isTestPath, type RepoLanguage } from '../../../pipeline/providers/git/repo.js';

/** One declaration in the context. Lines are 1-based and inclusive. */
export interface ContextChunk {
  path: string;
  start: number;
  end: number;
  score: number;
  /** The signals that chose it (`frame:handleX`, `id:SequenceNumber`, `file`, `dir`). */
  why: string[];
}

/** The context of one instance. */
export interface SourceContext {
  /** Markdown text of the chosen code. */
  text: string;
  tokens: number;
  chunks: ContextChunk[];
  /** The rule's name and version, recorded on every result. */
  rule: string;
}

export const CONTEXT_RULE = 'issue-signals-v1';

const EXT: Record<RepoLanguage, RegExp> = {
  go: /\.go$/,
  c: /\.[ch]$/,
  python: /\.py$/,
};
const FENCE_LANG: Record<RepoLanguage, string> = { go: 'go', c: 'c', python: 'python' };

/** Source files of the tree (repository-relative, sorted). */
export function sourceFiles(root: string, language: RepoLanguage): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      if (name.startsWith('.') || name === 'vendor' || name === 'node_modules') continue;
      const p = rel ? `${rel}/${name}` : name;
      const st = statSync(join(root, p));
      if (st.isDirectory()) walk(p);
      else if (EXT[language].test(name) && !isTestPath(language, p)) out.push(p);
    }
  };
  walk('');
  return out;
}

/** Signals of the problem statement (rule step 2). */
export function issueSignals(
  text: string,
  files: readonly string[],
  minIdentifier: number,
): { files: Set<string>; dirs: Set<string>; frames: Set<string>; identifiers: Set<string> } {
  const dirsOfTree = new Set(files.map((f) => posix.dirname(f)));
  const named = new Set<string>();
  const dirs = new Set<string>();
  for (const m of text.matchAll(/[\w./-]+/g)) {
    const tok = m[0].replace(/[.:]+$/, '');
    for (const f of files)
      if (f === tok || (tok.includes('/') && f.endsWith(`/${tok}`))) named.add(f);
    if (!tok.includes('/') && /\.\w+$/.test(tok))
      for (const f of files) if (posix.basename(f) === tok) named.add(f);
    if (dirsOfTree.has(tok)) dirs.add(tok);
    else for (const d of dirsOfTree) if (tok.includes('/') && d.endsWith(`/${tok}`)) dirs.add(d);
  }
  for (const f of named) dirs.add(posix.dirname(f));
  const frames = new Set<string>();
  for (const m of text.matchAll(/(?:\(\*?\w+\)\.|\b\w+\.)(\w+)\(/g)) frames.add(m[1]!);
  const identifiers = new Set<string>();
  for (const m of text.matchAll(/\b[A-Za-z_][A-Za-z0-9_]*\b/g)) {
    const w = m[0];
    if (w.length >= minIdentifier && /.[A-Z0-9_]/.test(w) && !/^[A-Z0-9_]+$/.test(w))
      identifiers.add(w);
  }
  return { files: named, dirs, frames, identifiers };
}

const DECL: Record<RepoLanguage, RegExp> = {
  go: /^(func|type|var|const)\b/,
  c: /^[A-Za-z_][\w\s*]*\(|^(struct|enum|typedef|static)\b/,
  python: /^(def|class|async def)\b/,
};

/** Top-level declarations of a file: [startLine, endLine] (1-based, inclusive), plus the name. */
export function declarations(
  text: string,
  language: RepoLanguage,
): { start: number; end: number; name: string }[] {
  const lines = text.split('\n');
  const starts: number[] = [];
  lines.forEach((l, i) => {
    if (DECL[language].test(l)) {
      // keep the doc comment above it with the declaration
      let s = i;
      while (s > 0 && /^(\/\/|#|\s*\*|\/\*)/.test(lines[s - 1]!)) s--;
      starts.push(s);
    }
  });
  const out: { start: number; end: number; name: string }[] = [];
  starts.forEach((s, k) => {
    let e = (starts[k + 1] ?? lines.length) - 1;
    while (e > s && lines[e]!.trim() === '') e--;
    const head = lines.slice(s, e + 1).find((l) => DECL[language].test(l)) ?? '';
    const name =
      /^func\s+(?:\([^)]*\)\s*)?(\w+)/.exec(head)?.[1] ??
      /^(?:async\s+)?(?:def|class|type)\s+(\w+)/.exec(head)?.[1] ??
      /(\w+)\s*\(/.exec(head)?.[1] ??
      '';
    out.push({ start: s + 1, end: e + 1, name });
  });
  return out;
}

/**
 * Chooses the source context of an instance by the module's rule.
 * @param root the clean tree at base_commit (`Built.source_dir`)
 * @param problem the problem statement (issue text)
 * @returns the rendered context, its cl100k size and the chosen declarations with reasons
 */
export function chooseContext(
  root: string,
  language: RepoLanguage,
  problem: string,
  opts: { maxTokens: number; minIdentifier: number },
): SourceContext {
  const files = sourceFiles(root, language);
  const sig = issueSignals(problem, files, opts.minIdentifier);
  const scored: (ContextChunk & { body: string; tokens: number })[] = [];
  for (const f of files) {
    const text = readFileSync(join(root, f), 'utf8');
    const lines = text.split('\n');
    for (const d of declarations(text, language)) {
      const body = lines.slice(d.start - 1, d.end).join('\n');
      const why: string[] = [];
      let score = 0;
      if (d.name && sig.frames.has(d.name)) {
        score += 5;
        why.push(`frame:${d.name}`);
      }
      for (const id of sig.identifiers) {
        if (body.includes(id)) {
          score += 1;
          why.push(`id:${id}`);
        }
      }
      if (score === 0) continue;
      if (sig.files.has(f)) {
        score += 2;
        why.push('file');
      }
      if (sig.dirs.has(posix.dirname(f))) {
        score += 1;
        why.push('dir');
      }
      scored.push({
        path: f,
        start: d.start,
        end: d.end,
        score,
        why,
        body,
        tokens: countCl100k(body),
      });
    }
  }
  scored.sort(
    (a, b) =>
      b.score - a.score || a.tokens - b.tokens || a.path.localeCompare(b.path) || a.start - b.start,
  );
  const chosen: typeof scored = [];
  let used = 0;
  for (const c of scored) {
    if (used + c.tokens + 20 > opts.maxTokens) continue;
    chosen.push(c);
    used += c.tokens + 20;
  }
  chosen.sort((a, b) => a.path.localeCompare(b.path) || a.start - b.start);
  let text: string;
  if (chosen.length === 0) {
    const dirs = [...new Set(files.map((f) => posix.dirname(f)))].sort();
    text = `No source declaration matched the issue. Source folders:\n${dirs.map((d) => `- ${d}`).join('\n')}\n`;
  } else {
    const parts = chosen.map(
      (c) =>
        `### ${c.path}, lines ${c.start}-${c.end}\n\`\`\`${FENCE_LANG[language]}\n${c.body}\n\`\`\`\n`,
    );
    text = parts.join('\n');
  }
  return {
    text,
    tokens: countCl100k(text),
    chunks: chosen.map(({ path, start, end, score, why }) => ({ path, start, end, score, why })),
    rule: CONTEXT_RULE,
  };
}
