/**
 * Options named by their text: before the answer grammar reads a reply, every occurrence of an
 * option's text (whole words, any case; longest texts first) is replaced by the marker `⟦k⟧`, k the
 * option's 1-based number, so `Final Answer: the UDR`, `I choose UDR` and `UDR is wrong` are read
 * like `option 4`. Texts that are a plain number (`4`, `16`) are not replaced: a bare number in an
 * answer is an option number, as in the prompts and the authors' scorer. Texts shorter than two
 * characters, or equal to more than one option, are not replaced either (they would name no one
 * option).
 */

/** The marker that stands for option `k` (1-based) in the text the grammar reads. */
export const optionMarker = (k: number): string => `⟦${k}⟧`;

const norm = (s: string): string =>
  s
    .trim()
    .replace(/^["'`*]+|["'`*.]+$/g, '')
    .replace(/\s+/g, ' ');
const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/**
 * Replaces each option text in `text` by its marker. Pure.
 * @param text the reply (or the part the grammar reads)
 * @param choices the item's option texts, in order
 */
export function markOptionTexts(text: string, choices: readonly string[]): string {
  const texts = choices.map(norm);
  const order = texts
    .map((t, i) => ({ t, k: i + 1, low: t.toLowerCase() }))
    .filter(
      ({ t, low }) =>
        t.length >= 2 &&
        !/^[-+]?\d+(?:\.\d+)?$/.test(t) &&
        low.length === t.length &&
        texts.filter((u) => u.toLowerCase() === low).length === 1,
    )
    .sort((a, b) => b.t.length - a.t.length);
  if (order.length === 0) return text;
  let out = text;
  for (const { low, k } of order) {
    const lowOut = out.toLowerCase();
    if (lowOut.length !== out.length) continue;
    let result = '';
    let from = 0;
    for (let at = lowOut.indexOf(low); at >= 0; at = lowOut.indexOf(low, at + 1)) {
      if (at < from || isWordChar(out[at - 1]) || isWordChar(out[at + low.length])) continue;
      result += out.slice(from, at) + optionMarker(k);
      from = at + low.length;
    }
    out = result + out.slice(from);
  }
  return out;
}
