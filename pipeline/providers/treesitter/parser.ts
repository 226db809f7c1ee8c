/**
 * tree-sitter for Go, C and Python through `web-tree-sitter` (WASM runtime, 0.25) and the prebuilt
 * grammars of `tree-sitter-wasms` (ABI 14; web-tree-sitter 0.25 accepts ABI 13–15). One `Parser`
 * per language is created lazily and reused.
 */
import { createRequire } from 'node:module';
import { Parser, Language, type Tree, type Node } from 'web-tree-sitter';
import { TelebenchError } from '../../errors.js';
import { rewriteCStatementMacros } from './c-macros.js';

export type { Tree, Node };

/** Languages this provider parses. */
export type SourceLanguage = 'go' | 'c' | 'python';

const require = createRequire(import.meta.url);
let initialised: Promise<void> | undefined;
const parsers = new Map<SourceLanguage, Promise<Parser>>();

/**
 * Path of the grammar file of `language` inside `tree-sitter-wasms`.
 * @throws TelebenchError `treesitter_grammar_missing` (tier infra) when the package is not installed
 */
export function grammarPath(language: SourceLanguage): string {
  try {
    return require.resolve(`tree-sitter-wasms/out/tree-sitter-${language}.wasm`);
  } catch (err) {
    throw new TelebenchError(
      'treesitter_grammar_missing',
      `tree-sitter grammar for ${language} not found in node_modules/tree-sitter-wasms/out; run npm install`,
      { tier: 'infra', context: { language }, cause: err },
    );
  }
}

/**
 * The shared parser for `language` (grammar loaded once per process).
 * @throws TelebenchError `treesitter_load_failed` (tier infra) when the WASM runtime or grammar
 *   does not load (e.g. an ABI the runtime does not read)
 */
export async function parserFor(language: SourceLanguage): Promise<Parser> {
  let p = parsers.get(language);
  if (!p) {
    p = (async () => {
      initialised ??= Parser.init();
      await initialised;
      const path = grammarPath(language);
      try {
        const lang = await Language.load(path);
        const parser = new Parser();
        parser.setLanguage(lang);
        return parser;
      } catch (err) {
        throw new TelebenchError(
          'treesitter_load_failed',
          `tree-sitter grammar ${path} did not load into web-tree-sitter: ${(err as Error).message}`,
          { tier: 'infra', context: { language, path }, cause: err },
        );
      }
    })();
    parsers.set(language, p);
    p.catch(() => parsers.delete(language));
  }
  return p;
}

/**
 * Parses `source` (UTF-8 text) as `language`. C first goes through
 * {@link rewriteCStatementMacros} (Open5GS's string-switch macros), which keeps every row, column
 * and byte offset; the text of a node on such a line is the rewritten text.
 * @returns the tree; `tree.rootNode.hasError` is true when the grammar found syntax errors (the
 *   tree is still usable: tree-sitter recovers)
 * @throws TelebenchError from {@link parserFor}, or `treesitter_parse_failed` when parsing yields no tree
 */
export async function parseSource(language: SourceLanguage, source: string): Promise<Tree> {
  const parser = await parserFor(language);
  const tree = parser.parse(language === 'c' ? rewriteCStatementMacros(source) : source);
  if (!tree) {
    throw new TelebenchError(
      'treesitter_parse_failed',
      `tree-sitter returned no tree (${language})`,
      {
        tier: 'bug',
        context: { language, bytes: source.length },
      },
    );
  }
  return tree;
}

const STRING_TYPES = new Set([
  'interpreted_string_literal',
  'raw_string_literal',
  'rune_literal',
  'string_literal',
  'char_literal',
  'string',
  'concatenated_string',
  'system_lib_string',
]);

/** True for comment nodes of every supported grammar. */
export function isComment(node: Node): boolean {
  return node.type === 'comment';
}

/** True for string and character literal nodes (kept as one token by {@link leafTokens}). */
export function isStringLiteral(node: Node): boolean {
  return STRING_TYPES.has(node.type);
}

/**
 * The code tokens of a subtree in source order: leaves, without comments; a string or character
 * literal is one token (its full text). Whitespace inside a token (Python `is not`) is removed.
 */
export function leafTokens(node: Node): string[] {
  const out: string[] = [];
  const walk = (n: Node): void => {
    if (isComment(n)) return;
    if (isStringLiteral(n)) {
      out.push(n.text);
      return;
    }
    if (n.childCount === 0) {
      const t = n.text.replace(/\s+/g, '');
      if (t.length > 0) out.push(t);
      return;
    }
    for (const c of n.children) if (c) walk(c);
  };
  walk(node);
  return out;
}
