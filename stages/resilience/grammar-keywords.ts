/**
 * The answer grammar's keyword shorthand compiled into Ohm rules (answer-grammar.ohm.ts writes a
 * whole word in any case as `kw<"word">`). Pure.
 */

/**
 * `source` with each `kw<"word">` replaced by an application of a rule of its own,
 * `kw_word = ("w" | "W") ("o" | "O") ... ~alnum`, appended to the grammar: exactly what
 * `(caseInsensitive<"word"> ~alnum)` matches. Ohm's `caseInsensitive` compares one UTF-16 unit
 * at a time, `actual.toUpperCase() === expected.toUpperCase()`, so each letter takes every unit
 * whose upper case is that letter's (`ı` for `i`, `ſ` for `s`). Speed only: Ohm builds a new
 * application and its memo key at every evaluation of a rule with arguments such as
 * `caseInsensitive<"word">`, and the grammar tries about a hundred keywords at each word of a
 * reply's window (issue 33).
 * @param source an Ohm grammar whose last `}` closes it
 */
export function expandKeywords(source: string): string {
  const words = [...new Set([...source.matchAll(/kw<"([^"]+)">/g)].map((m) => m[1]!))];
  const units = new Map<string, string[]>();
  for (const w of words) for (const ch of w) units.set(ch.toUpperCase(), []);
  for (let u = 0; u <= 0xffff; u++) {
    const c = String.fromCharCode(u);
    units.get(c.toUpperCase())?.push(c);
  }
  const literal = (c: string): string =>
    /^[ -~]$/.test(c) && c !== '"' && c !== '\\'
      ? `"${c}"`
      : `"\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}"`;
  const name = (w: string): string => `kw_${w.replace(/[^A-Za-z0-9]/g, '_')}`;
  if (new Set(words.map(name)).size !== words.length)
    throw new Error(`expandKeywords: two keywords share a rule name in ${words.join(', ')}`);
  const rules = words.map((w) => {
    const body = [...w].map((ch) => {
      const alts = units.get(ch.toUpperCase())!.map(literal);
      return alts.length === 1 ? alts[0]! : `(${alts.join(' | ')})`;
    });
    return `  ${name(w)} = ${body.join(' ')} ~alnum`;
  });
  const expanded = source.replace(/kw<"([^"]+)">/g, (_m, w: string) => name(w));
  const close = expanded.lastIndexOf('}');
  return `${expanded.slice(0, close)}${rules.join('\n')}\n${expanded.slice(close)}`;
}
