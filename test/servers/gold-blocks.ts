/**
 * For acceptance runs on real instances: a scripted model that answers with an instance's gold
 * patch written as SEARCH/REPLACE blocks (each hunk: context and removed lines -> SEARCH, context
 * and added lines -> REPLACE), so the solver's edit path and a predictions file of the same edits
 * can be graded side by side. Run: npx tsx test/servers/gold-blocks.ts <gold-jsonl> <port>
 * (gold-jsonl: lines of {instance_id, model_patch}; the instance is found by its problem text).
 */
import { readFileSync } from 'node:fs';
import { startLlmServer } from './llm-server.js';

/** The SEARCH/REPLACE blocks of a unified diff. */
export function blocksOfPatch(patch: string): string {
  const out: string[] = [];
  let file = '';
  let search: string[] = [];
  let replace: string[] = [];
  const flush = (): void => {
    if (search.length || replace.length)
      out.push(
        `${file}\n<<<<<<< SEARCH\n${search.join('\n')}\n=======\n${replace.join('\n')}\n>>>>>>> REPLACE\n`,
      );
    search = [];
    replace = [];
  };
  for (const l of patch.split('\n')) {
    if (l.startsWith('diff --git')) flush();
    else if (l.startsWith('+++ b/')) file = l.slice(6);
    else if (l.startsWith('@@')) flush();
    else if (l.startsWith('---') || l.startsWith('index ')) continue;
    else if (l.startsWith('+')) replace.push(l.slice(1));
    else if (l.startsWith('-')) search.push(l.slice(1));
    else if (l.startsWith(' ')) {
      search.push(l.slice(1));
      replace.push(l.slice(1));
    }
  }
  flush();
  return out.join('\n');
}

if (process.argv[1]?.endsWith('gold-blocks.ts')) {
  const rows = readFileSync(process.argv[2]!, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { instance_id: string; model_patch: string; key: string });
  const server = await startLlmServer({
    port: Number(process.argv[3] ?? 0),
    models: [{ name: 'gold-blocks', digest: '0'.repeat(64) }],
    fallback: (req) => {
      const body = req.body as { messages: { role: string; content: string }[] };
      const first = body.messages.find((m) => m.role === 'user')!.content;
      const row = rows.find((r) => first.includes(r.key));
      return { content: row ? blocksOfPatch(row.model_patch) : 'no idea' };
    },
  });
  process.stdout.write(`${server.url}\n`);
}
