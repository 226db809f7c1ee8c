/**
 * The value of a TeleMath answer's math, written in LaTeX or plain text (`\dfrac{3}{4}`,
 * `\sqrt{16}`, `3 \times 2^{4}`, `1.5e-3`, `10^{-3}`), by a real LaTeX math parser and evaluator,
 * `@cortex-js/compute-engine` (MathJSON; why a library: fractions, roots, powers, implicit
 * products, `\pi`, logarithms and their precedence are a language of their own, and a home-made
 * evaluator is the list of cases this replaces). The grammar (`answer-grammar.ohm.ts`) has already
 * cut the math out of the answer (units, prose and hedges are not given here) and normalised it to
 * LaTeX (thousands separators dropped, `×` as `\times`, `e` exponents as `\times10^{}`).
 *
 * The engine (about 2 MB) is loaded on the first numeric answer, so commands that never read one
 * do not pay for it.
 */
import type { ComputeEngine } from '@cortex-js/compute-engine';
import { lazy } from '../../pipeline/lazy.js';

const engineModule = lazy<typeof import('@cortex-js/compute-engine')>('@cortex-js/compute-engine');
let engine: ComputeEngine | null = null;

/**
 * Evaluates a LaTeX expression numerically.
 * @param tex LaTeX math without `$` delimiters or units (`\frac{3}{4}`, `1.5\times10^{-3}`)
 * @returns the real value, or null when the expression is not a finite real number (a variable,
 *   a syntax error, a complex value, an overflow)
 */
export function evaluateLatex(tex: string): number | null {
  engine ??= new (engineModule().ComputeEngine)();
  const expr = engine.parse(tex);
  if (!expr.isValid) return null;
  const n = expr.N();
  const im = n.im;
  const re = n.re;
  if (typeof re !== 'number' || !Number.isFinite(re) || (typeof im === 'number' && im !== 0))
    return null;
  return re;
}
