/**
 * Per-instance specification skills (SWE-Bench 5G paper, "3GPP specifications as skill
 * documents": a concise Markdown document of about 350 tokens per instance with field optionality,
 * expected NF behaviour and a closing key-implication paragraph, "without revealing the fix").
 *
 * Assembly by rule (`skills.writer: template`; with `writer: model` see {@link skillPrompt}):
 *  1. the area document of `skills/` whose `spec` equals one of the instance's `spec_refs` with the
 *     clause dropped (skills/README.md, `index.yaml`);
 *  2. its title line, the issue's first line (what the task is about), its `**Role.**` paragraph,
 *     then its bullet lines ranked by the identifiers they share with the issue, added while the
 *     skill stays under `max_tokens` cl100k tokens, then a `Source:` line citing the spec (and the
 *     clause when the instance's reference has one), then its `**Key implication.**` paragraph;
 *  3. checked: `min_tokens`..`max_tokens` cl100k tokens; a cited clause (`TS xx.yyy`); no
 *     identifier the gold patch adds (mixed-case or snake-case names of 5+ characters on its `+`
 *     lines, and the functions its hunks name, unless the issue itself names them) and no added
 *     line of the gold patch (10+ characters). A skill that fails any check is rejected with the
 *     reasons, never shortened or edited to pass.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { countCl100k } from '../../../pipeline/providers/tokenizer/cl100k.js';

/** One area document. */
export interface AreaDocument {
  file: string;
  spec: string;
  title: string;
  nf: string[];
  sources: string[];
  body: string;
}

/** Reads `index.yaml` and the documents it lists. @throws Error naming a file that is missing */
export function loadAreaDocuments(dir: string): AreaDocument[] {
  const index = parseYaml(readFileSync(join(dir, 'index.yaml'), 'utf8')) as {
    skills: { file: string; spec: string }[];
  };
  return index.skills.map((s) => {
    const path = join(dir, s.file);
    if (!existsSync(path)) throw new Error(`skills/index.yaml lists ${s.file}, which is missing`);
    const text = readFileSync(path, 'utf8');
    const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
    const fm = (m ? parseYaml(m[1]!) : {}) as { title?: string; nf?: string[]; sources?: string[] };
    return {
      file: s.file,
      spec: s.spec,
      title: fm.title ?? s.spec,
      nf: fm.nf ?? [],
      sources: fm.sources ?? [],
      body: (m ? m[2]! : text).trim(),
    };
  });
}

/** The area document of an instance: first spec_ref (clause dropped) with a document. */
export function documentFor(
  specRefs: readonly string[],
  docs: readonly AreaDocument[],
): { doc: AreaDocument; ref: string } | undefined {
  for (const ref of specRefs) {
    const spec = ref.replace(/\s*§.*$/, '').trim();
    const doc = docs.find((d) => d.spec === spec);
    if (doc) return { doc, ref };
  }
  return undefined;
}

const identifiersOf = (text: string): Set<string> =>
  new Set([...text.matchAll(/\b[A-Za-z_][A-Za-z0-9_]*\b/g)].map((m) => m[0]));

/**
 * What a skill must not contain: identifiers and added lines of the gold patch (see the module
 * comment), minus identifiers the problem statement itself names.
 */
export function goldLeaks(
  goldPatch: string,
  problem: string,
): { identifiers: string[]; lines: string[] } {
  const inIssue = identifiersOf(problem);
  const ids = new Set<string>();
  const lines: string[] = [];
  for (const l of goldPatch.split('\n')) {
    if (l.startsWith('+') && !l.startsWith('+++')) {
      const t = l.slice(1).trim();
      if (t.length >= 10) lines.push(t);
      for (const id of identifiersOf(t))
        if (id.length >= 5 && /[a-z][A-Z]|_|[A-Z][a-z]+[A-Z]/.test(id) && !inIssue.has(id))
          ids.add(id);
    }
    const h =
      /^@@[^@]*@@.*?\bfunc\s+(?:\([^)]*\)\s*)?(\w+)/.exec(l) ?? /^@@[^@]*@@.*?\b(\w+)\s*\(/.exec(l);
    if (h && !inIssue.has(h[1]!) && h[1]!.length >= 4) ids.add(h[1]!);
  }
  return { identifiers: [...ids].sort(), lines };
}

/** Result of the checks. */
export interface SkillCheck {
  tokens: number;
  ok: boolean;
  /** Why it was rejected (empty when ok). */
  problems: string[];
}

/** Checks a skill text (module comment, step 3). */
export function checkSkill(
  text: string,
  leaks: { identifiers: string[]; lines: string[] },
  limits: { min: number; max: number },
): SkillCheck {
  const tokens = countCl100k(text);
  const problems: string[] = [];
  if (tokens < limits.min || tokens > limits.max)
    problems.push(`${tokens} cl100k tokens, outside ${limits.min}-${limits.max}`);
  if (!/\bTS \d{2}\.\d{3}\b/.test(text)) problems.push('no cited specification clause (TS xx.yyy)');
  const words = identifiersOf(text);
  const leakedIds = leaks.identifiers.filter((id) => words.has(id));
  if (leakedIds.length) problems.push(`names gold-patch identifier(s) ${leakedIds.join(', ')}`);
  const leakedLines = leaks.lines.filter((l) => text.includes(l));
  if (leakedLines.length)
    problems.push(`contains ${leakedLines.length} added line(s) of the gold patch`);
  return { tokens, ok: problems.length === 0, problems };
}

/**
 * Assembles the skill of one instance from its area document and the issue (module comment, step 2).
 * @returns the Markdown text (not yet checked)
 */
export function assembleSkill(
  doc: AreaDocument,
  ref: string,
  problem: string,
  maxTokens: number,
): string {
  const paras = doc.body.split(/\n\s*\n/);
  const role = paras.find((p) => p.startsWith('**Role.**')) ?? '';
  const key = paras.find((p) => p.startsWith('**Key implication.**')) ?? '';
  const bullets: string[] = [];
  for (const p of paras) {
    if (p === role || p === key || p.startsWith('#')) continue;
    // a bullet continues on indented lines
    const items = p.split(/\n(?=- )/).map((b) => b.replace(/\n\s+/g, ' ').trim());
    for (const b of items)
      if (b.startsWith('- ')) bullets.push(b);
      else if (!b.startsWith('**')) bullets.push(b);
  }
  const issueWords = identifiersOf(problem.toLowerCase());
  const rank = (b: string): number =>
    [...identifiersOf(b.toLowerCase())].filter((w) => w.length >= 4 && issueWords.has(w)).length;
  const ranked = bullets
    .map((b, i) => ({ b, i, r: rank(b) }))
    .sort((a, c) => c.r - a.r || a.i - c.i);
  const title =
    problem
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  const source = `Source: ${ref.includes('§') ? ref : doc.spec}${doc.sources[0] ? ` (${doc.sources[0].replace(/^[^ ]+ /, '')})` : ''}.`;
  const head = [`# ${doc.spec}: ${doc.title}`, '', `Task context: ${title}`, '', role];
  const render = (chosen: string[]): string =>
    [...head, '', '**Fields and behaviour.**', ...chosen, '', source, '', key].join('\n').trim() +
    '\n';
  const chosen: { b: string; i: number }[] = [];
  for (const c of ranked) {
    const next = [...chosen, c].sort((a, d) => a.i - d.i);
    if (countCl100k(render(next.map((x) => x.b))) > maxTokens) continue;
    chosen.push(c);
  }
  return render(chosen.sort((a, d) => a.i - d.i).map((x) => x.b));
}

/** Version of {@link skillPrompt}'s text; recorded with every model-written skill. */
export const SKILL_PROMPT_VERSION = 'skill-writer-v1';

/**
 * The prompt that asks a model to write an instance's skill (`skills.writer: model`) from the same
 * inputs as the template: the area document and the issue; never the gold patch or any code. The
 * answer is checked by {@link checkSkill} exactly like a template skill and used as is (trimmed).
 * @returns system and user messages
 */
export function skillPrompt(
  doc: AreaDocument,
  ref: string,
  problem: string,
  limits: { min: number; max: number },
): { system: string; user: string } {
  const words = `${Math.round(limits.min * 0.75)}-${Math.round(limits.max * 0.75)}`;
  return {
    system:
      'You write short specification notes for software engineers fixing bugs in 5G core network functions. You explain what the 3GPP specification requires; you never write code and never propose a patch.',
    user: [
      `Write a Markdown note of ${words} words (${limits.min}-${limits.max} tokens) on ${ref} for the bug report below.`,
      'It must contain, in this order:',
      `1. a title line \`# ${doc.spec}: ${doc.title}\`;`,
      '2. which fields of the messages involved are mandatory or optional (field optionality);',
      '3. how the network function is expected to behave when a field is missing or invalid;',
      `4. a line \`Source: ${ref}\` citing the specification;`,
      '5. a closing paragraph that starts with `**Key implication.**`.',
      'Do not name functions, variables or files of the source code, and do not write code.',
      '',
      '## Bug report',
      '',
      problem.trim(),
      '',
      `## Area document (${doc.spec})`,
      '',
      doc.body,
    ].join('\n'),
  };
}
