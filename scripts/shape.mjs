#!/usr/bin/env node
// The shape measurements of issue 25, over the sources (pipeline/, stages/, bin/; not test/ or bench/):
// functions over 80 lines (the longest listed), files over 400 lines, reads of another stage's
// outputs by a string name in stages/, and `instanceof` on LLM providers outside
// pipeline/providers/llm/. Usage: node scripts/shape.mjs [--top N] [--json]
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = process.cwd();
const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 10;
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (/\.ts$/.test(name) && !/\.d\.ts$/.test(name)) files.push(p);
  }
};
for (const d of ['pipeline', 'stages']) walk(join(root, d));

const functions = [];
const bigFiles = [];
let outputReads = 0;
let recordReads = 0;
let castReads = 0;
const providerInstanceof = [];
const PROVIDERS =
  /instanceof\s+(CachedProvider|FallbackProvider|LlmPool|OllamaProvider|OpenAiCompatibleProvider|EmbeddedProvider|ScriptedProvider)\b/g;
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const rel = relative(root, file);
  const lines = text.split('\n').length;
  if (lines > 400) bigFiles.push({ file: rel, lines });
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = sf.getLineAndCharacterOfPosition(node.end).line;
      let name = node.name?.getText?.() ?? '';
      if (!name && ts.isVariableDeclaration(node.parent)) name = node.parent.name.getText();
      if (!name && ts.isPropertyAssignment(node.parent)) name = node.parent.name.getText();
      functions.push({ name: name || '(anonymous)', file: rel, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (rel.startsWith('stages/')) {
    for (const m of text.matchAll(/\.(outputs|items|item)(<[^>]*>)?\(\s*['"`]/g)) {
      if (m[1] === 'outputs') outputReads++;
      else recordReads++;
      if (m[2]) castReads++;
    }
  }
  if (!rel.startsWith('pipeline/providers/llm/'))
    for (const m of text.matchAll(PROVIDERS)) providerInstanceof.push(`${rel}: ${m[0]}`);
}
functions.sort((a, b) => b.lines - a.lines);
bigFiles.sort((a, b) => b.lines - a.lines);
const over80 = functions.filter((f) => f.lines > 80);
const out = {
  functionsOver80: over80.length,
  longest: over80.slice(0, top),
  filesOver400: bigFiles.length,
  largest: bigFiles.slice(0, top),
  stringNamedOutputReadsInStages: outputReads,
  stringNamedRecordReadsInStages: recordReads,
  ofThemWithExplicitType: castReads,
  providerInstanceofOutsideLlm: providerInstanceof,
};
if (process.argv.includes('--json')) console.log(JSON.stringify(out, null, 2));
else {
  console.log(`functions over 80 lines: ${out.functionsOver80}`);
  for (const f of out.longest) console.log(`  ${f.lines}\t${f.name}\t${f.file}`);
  console.log(`files over 400 lines: ${out.filesOver400}`);
  for (const f of out.largest) console.log(`  ${f.lines}\t${f.file}`);
  console.log(
    `string-named reads in stages/: outputs ${outputReads}, item records (items/item) ${recordReads} (${castReads} with an explicit type)`,
  );
  console.log(
    `instanceof on LLM providers outside pipeline/providers/llm/: ${providerInstanceof.length}`,
  );
  for (const l of providerInstanceof) console.log(`  ${l}`);
}
