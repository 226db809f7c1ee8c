/**
 * Numeric helpers for the TeleMath subset: the tolerance match of the paper and the number text
 * the published instances use.
 */

/**
 * True when `a` and `b` agree within a relative or an absolute tolerance, as Python's
 * `math.isclose`: `|a-b| <= max(rel * max(|a|,|b|), abs)`.
 * Source: paper section V-D ("within a tolerance of 1e-3 relative error or 1e-5 absolute error").
 * @param a,b finite numbers (a non-finite operand never matches unless both are the same infinity)
 */
export function numbersMatch(a: number, b: number, rel = 1e-3, abs = 1e-5): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= Math.max(rel * Math.max(Math.abs(a), Math.abs(b)), abs);
}

/**
 * The text Python's `repr(float(x))` gives, which is how the published TeleMath instances print
 * `correct_answer` and `incorrect_answer` ("0.033", "2.0", "1e-05", "1.5e+16"): shortest
 * round-trip digits, scientific notation when the exponent is below -4 or at least 16.
 * @param x a finite number; NaN and infinities give "nan", "inf", "-inf"
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (Object.is(x, -0)) return '-0.0';
  if (x === 0) return '0.0';
  const [mant, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  const sign = neg ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : String(Math.abs(exp));
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${intPart}.${frac === '' ? '0' : frac}`;
}

/**
 * Parses a number written in decimal or scientific notation, with optional thousands commas
 * removed ("1,200.5"), a leading "+", or a trailing "%"-free unit-less form. Returns null for
 * anything else (so "12 dB" is null: callers extract the number first).
 */
export function parseNumber(text: string): number | null {
  const t = text.trim().replace(/(?<=\d),(?=\d{3}\b)/g, '');
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}
