/**
 * Anchors of a model-written problem statement (issue 31): the things of the writer's inputs a
 * statement can name so that a solver can find the bug — an identifier of the buggy code, a
 * changed file, the error or panic text of the failing output — and the failing tests' names, which
 * the solver never sees (they arrive with the hidden test patch) and so ground nothing on their own.
 * SWE-bench Verified's annotators called such a statement "well-specified" when it says where and
 * what goes wrong; R2E-Gym's back-translated statements are written from the fail-to-pass tests'
 * output for the same reason. The quality check (quality.ts) asks for at least one anchor.
 */
import { basename } from 'node:path';
import { eng as STOPWORDS } from 'stopword';
import { tokens } from './leak.js';

/** What the writer was shown, as far as grounding goes (a subset of `StatementContext`). */
export interface GroundingInput {
  /** The buggy functions at base_commit. */
  buggyCode: string;
  /** The failing tests' output at the parent (may be ''). */
  testOutput: string;
  /** Files the fix changes. */
  files: string[];
  FAIL_TO_PASS: string[];
}

/** The anchors of the inputs. */
export interface Anchors {
  /** Code-like identifiers of the buggy code (camelCase humps, `_`, digits, ALL-CAPS, or `f(`). */
  code: Set<string>;
  /** Changed files' paths and base names (`internal/ngap/handler.go`, `handler.go`). */
  files: string[];
  /** Content-word bigrams of the failing output's error lines ("nil pointer", "attributeerror nonetype"). */
  outputBigrams: Set<string>;
  /** Code-like identifiers of the failing output's error lines (`AttributeError`, `SIGSEGV`). */
  outputIdents: Set<string>;
  /** The failing tests' names (the part after `::`, and each `/` part of a Go subtest). */
  tests: Set<string>;
}

/** What a statement names of the anchors. */
export interface Grounding {
  code: string[];
  files: string[];
  /** Output bigrams or identifiers the statement repeats. */
  output: string[];
  tests: string[];
}

const KEYWORDS = new Set(
  (
    'func return nil if else for range var const type struct interface map chan go defer select ' +
    'switch case default break continue package import int char void static unsigned long ' +
    'sizeof NULL None True False def class self raise try except finally with lambda pass ' +
    'elif while assert async await print len str dict list string bool error byte'
  ).split(' '),
);

/** An identifier worth naming: humped (`gnbId`), `_`-joined, with digits, or ALL-CAPS of 4+. */
const codeLike = (t: string) =>
  t.length >= 4 && (/[a-z][A-Z]|[A-Z]{2}[a-z]|_|\d/.test(t) || /^[A-Z]{4,}$/.test(t));

/** Lines of a test log that say what went wrong (not the runner's bookkeeping). */
const ERROR_LINE =
  /panic|error|exception|assert|segmentation|signal|sigsegv|sigabrt|traceback|fatal|abort|expected|got|want|nil pointer|null|none/i;

/** Words of `s` (Unicode word segmentation, `Intl.Segmenter`), as written. */
export function words(s: string): string[] {
  const seg = new Intl.Segmenter('en', { granularity: 'word' });
  return [...seg.segment(s)].filter((x) => x.isWordLike).map((x) => x.segment);
}

/** A word for matching: lower case, a plural or third-person `s` dropped ("dereferences"). */
const norm = (w: string) => {
  const l = w.toLowerCase();
  return l.length > 3 && l.endsWith('s') && !l.endsWith('ss') ? l.slice(0, -1) : l;
};

const STOP = new Set(STOPWORDS);
/** Words that never carry an error's meaning alone (the runner's and the generic ones). */
const RUNNER = new Set(['fail', 'failed', 'pass', 'passed', 'ok', 'run', 'test', 'go', 'line']);

/** Content-word bigrams of `s` (stop words, runner words, numbers and `skip` words dropped). */
export function contentBigrams(s: string, skip: Set<string>): Set<string> {
  const ws = words(s)
    .map(norm)
    .filter((w) => !STOP.has(w) && !RUNNER.has(w) && !skip.has(w) && !/^\d/.test(w));
  const out = new Set<string>();
  for (let i = 0; i + 1 < ws.length; i++) out.add(`${ws[i]} ${ws[i + 1]}`);
  return out;
}

/** The failing tests' names as a solver would read them in a statement. */
function testNames(FAIL_TO_PASS: string[]): Set<string> {
  const out = new Set<string>();
  for (const t of FAIL_TO_PASS) {
    const name = t.split('::').pop() ?? '';
    for (const part of [name, ...name.split('/')]) if (part.length >= 3) out.add(part);
  }
  return out;
}

/** The anchors of what the writer was shown. */
export function anchorsOf(c: GroundingInput): Anchors {
  const tests = testNames(c.FAIL_TO_PASS);
  const code = new Set<string>();
  const keep = (tok: string) => !KEYWORDS.has(tok) && !tests.has(tok);
  for (const tok of tokens(c.buggyCode))
    if (/^[A-Za-z_]/.test(tok) && codeLike(tok) && keep(tok)) code.add(tok);
  // a called or defined name, `f(` with no blank (prose in comments writes "word (aside)")
  for (const m of c.buggyCode.matchAll(/\b([A-Za-z_]\w{3,})\(/g)) if (keep(m[1]!)) code.add(m[1]!);
  const errorLines = c.testOutput.split('\n').filter((l) => ERROR_LINE.test(l));
  const skip = new Set([...tests].flatMap((n) => words(n).map(norm)));
  const outputIdents = new Set<string>();
  for (const tok of tokens(errorLines.join('\n')))
    if (/^[A-Za-z_]/.test(tok) && codeLike(tok) && !tests.has(tok)) outputIdents.add(tok);
  const files = [...new Set(c.files.flatMap((f) => [f, basename(f)]))];
  return {
    code,
    files,
    outputBigrams: contentBigrams(errorLines.join('\n'), skip),
    outputIdents,
    tests,
  };
}

/** What `statement` names of `a` (identifiers as whole tokens, case kept). */
export function groundingOf(statement: string, a: Anchors): Grounding {
  const said = new Set(tokens(statement));
  const bigrams = contentBigrams(statement, new Set());
  return {
    code: [...a.code].filter((x) => said.has(x)),
    files: a.files.filter((f) => statement.includes(f)),
    output: [
      ...[...a.outputIdents].filter((x) => said.has(x) && !a.code.has(x)),
      ...[...a.outputBigrams].filter((b) => bigrams.has(b)),
    ],
    tests: [...a.tests].filter((x) => said.has(x)),
  };
}
