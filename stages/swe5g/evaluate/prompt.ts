/**
 * The solver's messages: the system prompt (role and the SEARCH/REPLACE format), the first user
 * message (problem statement, optional skill, source context) and the feedback of a failed turn
 * at its level (`compile`, `names`, `full`), trimmed to a cl100k budget. Versioned: every result
 * records {@link PROMPT_VERSION}.
 */
import {
  countCl100k,
  decodeCl100k,
  encodeCl100k,
} from '../../../pipeline/providers/tokenizer/cl100k.js';
import type { ParsedRun } from '../harness/parsers.js';
import type { StepResult } from '../../../pipeline/providers/docker/executor.js';
import type { EditOutcome } from './edits.js';
import type { Grade } from './grade.js';
import { goTestOutput } from '../validate/validate.js';

export const PROMPT_VERSION = 'swe5g-eval-v1';

/** System prompt: the task and the edit format. */
export function systemPrompt(language: string): string {
  return [
    `You are a software engineer fixing a bug in a 5G core network function written in ${language}.`,
    'Answer with the changes as SEARCH/REPLACE blocks, one per change, each exactly like this:',
    '',
    'path/to/file.go',
    '<<<<<<< SEARCH',
    'lines copied exactly from the current file',
    '=======',
    'the new lines',
    '>>>>>>> REPLACE',
    '',
    'The path comes on the line before <<<<<<< SEARCH. The SEARCH part must match the file line for line and be unique in it.',
    'Copy enough lines to be unique. Change only what the fix needs. Fix every place that has the bug.',
  ].join('\n');
}

/** The first user message. */
export function taskPrompt(args: { problem: string; context: string; skill?: string }): string {
  return [
    '## Issue',
    args.problem.trim(),
    '',
    ...(args.skill ? ['## Specification', args.skill.trim(), ''] : []),
    '## Source code',
    args.context.trim(),
    '',
    'Write the fix as SEARCH/REPLACE blocks.',
  ].join('\n');
}

/**
 * Keeps the head and the tail of a text within `budget` cl100k tokens, marking what was cut.
 * @returns the text unchanged when it fits
 */
export function trimTokens(text: string, budget: number): string {
  const ids = encodeCl100k(text);
  if (ids.length <= budget) return text;
  const head = Math.floor(budget / 3);
  const tail = budget - head - 12;
  return `${decodeCl100k(ids.slice(0, head))}\n[... ${ids.length - head - tail} tokens cut ...]\n${decodeCl100k(ids.slice(ids.length - tail))}`;
}

/** Compiler errors of a run: `go test -json` build output events, and stderr. */
export function compileErrors(result: StepResult | null): string {
  if (!result) return '';
  const out: string[] = [];
  for (const line of result.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const ev = JSON.parse(line) as { Action?: string; Output?: string };
      if (ev.Action === 'build-output' && ev.Output) out.push(ev.Output.replace(/\n$/, ''));
    } catch {
      continue; // a non-JSON line of the go command: stderr carries the same text
    }
  }
  const err = result.stderr.trim();
  if (err) out.push(err);
  return out.join('\n');
}

/** Output lines of one failing test (Go JSON events; '' for other recipes). */
function testOutput(result: StepResult, id: string, recipe: string): string {
  return recipe === 'go' ? goTestOutput(result.stdout, id) : '';
}

/** Describes edit outcomes for the model. */
export function describeEdits(outcomes: readonly EditOutcome[]): string {
  if (outcomes.length === 0)
    return 'No SEARCH/REPLACE block was found in your answer; nothing was changed.';
  return outcomes
    .map((o) =>
      o.applied
        ? `- block ${o.index} (${o.file}): applied (${o.rule}, ${o.detail})`
        : `- block ${o.index} (${o.file || 'no path'}): NOT applied, ${o.reason}: ${o.detail}`,
    )
    .join('\n');
}

/**
 * The feedback message after a failed turn.
 * @param level `compile`: edit outcomes, whether it compiled and the compiler errors; `names`: plus
 *   the failing hidden tests' names; `full`: plus their output. The fail-to-pass tests never print
 *   the pattern they look for (testgen), so `full` does not hand over the answer.
 * @param budget cl100k tokens for the whole message (the test output is what gets trimmed)
 */
export function feedbackMessage(args: {
  level: 'compile' | 'names' | 'full';
  budget: number;
  outcomes: readonly EditOutcome[];
  grade: Grade;
  result: StepResult | null;
  parsed: ParsedRun | null;
  recipe: string;
  patch: string;
}): string {
  const { grade } = args;
  const parts: string[] = ['## Result of your last answer', describeEdits(args.outcomes), ''];
  if (!grade.patch_applied) {
    parts.push(`The changes could not be applied: ${grade.apply_error}`);
  } else if (grade.build_failures.length > 0) {
    parts.push(
      `The code does not compile (${grade.build_failures.join(', ')}):`,
      compileErrors(args.result),
    );
  } else {
    parts.push('The code compiles, but the tests do not all pass.');
    const failing = [...Object.entries(grade.FAIL_TO_PASS), ...Object.entries(grade.PASS_TO_PASS)]
      .filter(([, s]) => s !== 'pass')
      .map(([id, s]) => ({ id, s }));
    if (args.level !== 'compile' && failing.length > 0) {
      parts.push('', 'Failing tests:', ...failing.map((f) => `- ${f.id} (${f.s})`));
      if (args.level === 'full' && args.result) {
        const outputs = failing
          .map((f) => {
            const o = testOutput(args.result!, f.id, args.recipe).trim();
            return o ? `### ${f.id}\n${o}` : '';
          })
          .filter(Boolean);
        if (outputs.length === 0 && args.recipe !== 'go') outputs.push(args.result.stdout.trim());
        if (outputs.length > 0) parts.push('', 'Test output:', outputs.join('\n'));
      }
    }
  }
  const tail = [
    '',
    '## Current changes (diff against the original code)',
    args.patch.trim() ? `\`\`\`diff\n${args.patch.trim()}\n\`\`\`` : '(none)',
    '',
    'Answer with SEARCH/REPLACE blocks against the current files (your applied changes stay).',
  ].join('\n');
  const head = parts.join('\n');
  const room = Math.max(64, args.budget - countCl100k(tail));
  return `${trimTokens(head, room)}\n${trimTokens(tail, Math.max(64, args.budget - Math.min(room, countCl100k(head))))}`;
}
