/**
 * The part of `stopword` (npm, MIT; v3 ships no types, `@types/stopword` describes v2's other
 * names) that the repository uses: the English stop-word list (statement/quality.ts).
 */
declare module 'stopword' {
  /** English stop words, lower case ("the", "is", "because", ...). */
  export const eng: string[];
}
