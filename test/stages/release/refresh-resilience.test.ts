/**
 * `telebench refresh teleresiliencebench` through the real CLI, the generator being the scripted
 * model server (test/servers/llm-server.ts, real HTTP, Ollama routes): a release 1.0.0 from one
 * small subset file; a second subset is added to the registry and a row appended to the first
 * file; `refresh` asks the model only for the new rows (counted at the server), 1.1.0 holds the
 * old rows byte for byte plus the new ones, its changelog lists exactly the added rows and the
 * manifest records the sources; a second refresh writes nothing (exit 0); a row edited in its file
 * is regenerated and listed as changed, a row deleted from its file is removed with its reason.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLlmServer, type LlmServer } from '../../servers/llm-server.js';
import { writeResilienceWorkdir } from '../../fixtures/resilience-workdir.js';
import { runCli, type CliResult } from '../../fixtures/cli.js';
import { readReleaseRows } from '../../../stages/release/assemble.js';

const ID = 'teleresiliencebench';
const row = (q: string) => [q, ['1. A', '2. B', '3. C'], '1'];

let llm: LlmServer;
let work: string;
let state: string;
let config: string;

function cli(args: string[]): Promise<CliResult> {
  return runCli(['--state', state, ...args, '--config', config], { HF_TOKEN: '' });
}

/** The user prompts the server was asked since `from` (one per generated row). */
function asked(from: number): string[] {
  return llm
    .chatRequests()
    .slice(from)
    .map((q) => (q.body as { messages: { content: string }[] }).messages.at(-1)!.content);
}

function release(version: string) {
  const dir = join(state, 'releases', ID, version);
  return {
    dir,
    rows: readReleaseRows(dir),
    manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
      previous_version: string | null;
      sources?: Record<string, { file: string; sha256: string }>;
    },
    changelog: readFileSync(join(dir, 'CHANGELOG.md'), 'utf8'),
  };
}

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => String(r.sample_id)).sort();

beforeAll(async () => {
  // every answer is option 2 and every gold is option 1: each row becomes an instance
  llm = await startLlmServer({
    fallback: {
      thinking: 'First I read the question. Then I compare the options. Option 2 looks right.',
      content: 'Final Answer: 2',
    },
  });
  work = mkdtempSync(join(tmpdir(), 'telebench-trb-refresh-'));
  ({ configFile: config } = writeResilienceWorkdir({
    dir: work,
    rows: [row('Which timer guards T3510?'), row('Which layer carries NAS?')],
    source: 'refresh-test',
    llmUrl: llm.url,
    concurrency: 2,
  }));
  appendFileSync(config, 'release:\n  allow_scripted_output: true\n');
  state = join(work, 'state');
});
afterAll(async () => {
  await llm?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('telebench refresh (TeleResilienceBench)', () => {
  it('no release yet: exit 2 naming where it looked', async () => {
    const r = await cli(['refresh', 'resilience']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`no release of ${ID} to refresh in ${state}/releases/${ID}`);
  });

  it('a new subset and an appended row: only those are generated; 1.1.0 holds all, the changelog lists exactly them', async () => {
    const first = await cli(['run', 'resilience']);
    expect(first.code, first.stderr.slice(-3000)).toBe(0);
    expect(asked(0)).toHaveLength(2);
    expect((await cli(['release', ID, '--version', '1.0.0'])).code).toBe(0);
    const v1 = release('1.0.0');
    expect(ids(v1.rows)).toEqual(['refresh-test:q:0', 'refresh-test:q:1']);
    expect(Object.keys(v1.manifest.sources ?? {})).toEqual(['refresh-test:q']);

    // a second subset file, and a new row at the end of the first file
    // (two rows: a one-line file would read as one JSON array, not as JSON Lines)
    const rRows = [row('Which NF selects the SMF?'), row('Which NF stores subscriptions?')];
    writeFileSync(
      join(work, 'data', 'r.json'),
      `${rRows.map((x) => JSON.stringify(x)).join('\n')}\n`,
    );
    appendFileSync(join(work, 'data', 'q.json'), `${JSON.stringify(row('What does AMF mean?'))}\n`);
    appendFileSync(
      join(work, 'subsets.yaml'),
      '  - { name: r, source: refresh-test, adapter: gajjar-jsonl, file: r.json }\n',
    );
    const before = llm.chatRequests().length;
    const r = await cli(['refresh', ID, '--version', '1.1.0']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const prompts = asked(before);
    expect(prompts).toHaveLength(3);
    expect(prompts.some((p) => p.includes('Which NF selects the SMF?'))).toBe(true);
    expect(prompts.some((p) => p.includes('Which NF stores subscriptions?'))).toBe(true);
    expect(prompts.some((p) => p.includes('What does AMF mean?'))).toBe(true);
    expect(r.stderr).toMatch(/source added refresh-test:r \(r\.json, sha256 [0-9a-f]{12}\)/);
    expect(r.stderr).toMatch(/source changed refresh-test:q \(q\.json\): sha256 [0-9a-f]{12} -> /);
    expect(r.stdout).toContain(`refreshed: ${ID} 1.0.0 -> 1.1.0 (written)`);
    expect(r.stdout).toContain('rows 2 -> 5; new candidates released 3 of 3; removed 0');

    const v2 = release('1.1.0');
    expect(ids(v2.rows)).toEqual([
      'refresh-test:q:0',
      'refresh-test:q:1',
      'refresh-test:q:2',
      'refresh-test:r:0',
      'refresh-test:r:1',
    ]);
    for (const old of v1.rows)
      expect(v2.rows.find((x) => x.sample_id === old.sample_id)).toEqual(old);
    expect(v2.manifest.previous_version).toBe('1.0.0');
    expect(Object.keys(v2.manifest.sources ?? {}).sort()).toEqual([
      'refresh-test:q',
      'refresh-test:r',
    ]);
    expect(v2.manifest.sources!['refresh-test:q']!.sha256).not.toBe(
      v1.manifest.sources!['refresh-test:q']!.sha256,
    );
    expect(v2.changelog).toContain('2 -> 5 rows; 3 added, 0 removed, 0 changed.');
    expect(v2.changelog).toContain(
      '- added: `refresh-test:q:2`, `refresh-test:r:0`, `refresh-test:r:1`',
    );
    expect(v2.changelog).not.toMatch(/^- (removed|changed)/m);
  });

  it('a second refresh with nothing new writes no version and exits 0', async () => {
    const before = llm.chatRequests().length;
    const r = await cli(['refresh', ID]);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toContain('nothing new:');
    expect(r.stdout).toContain('1.1.0 stays the latest release (no version written)');
    expect(asked(before)).toHaveLength(0);
    expect(existsSync(join(state, 'releases', ID, '0.0.0'))).toBe(false);
  });

  it('a row edited in its file is regenerated and changed; a deleted row is removed with its reason', async () => {
    // r.json: its first row edited; q.json: its last row deleted
    const rRows = [row('Which NF selects the UPF?'), row('Which NF stores subscriptions?')];
    writeFileSync(
      join(work, 'data', 'r.json'),
      `${rRows.map((x) => JSON.stringify(x)).join('\n')}\n`,
    );
    const q = readFileSync(join(work, 'data', 'q.json'), 'utf8')
      .trim()
      .split('\n');
    writeFileSync(join(work, 'data', 'q.json'), `${q.slice(0, 2).join('\n')}\n`);
    const before = llm.chatRequests().length;
    const r = await cli(['refresh', ID, '--version', '1.2.0']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(asked(before)).toHaveLength(1);
    const v3 = release('1.2.0');
    expect(ids(v3.rows)).toEqual([
      'refresh-test:q:0',
      'refresh-test:q:1',
      'refresh-test:r:0',
      'refresh-test:r:1',
    ]);
    expect(v3.rows.find((x) => x.sample_id === 'refresh-test:r:0')!.question).toBe(
      'Which NF selects the UPF?',
    );
    expect(v3.changelog).toContain('5 -> 4 rows; 0 added, 1 removed, 1 changed.');
    expect(v3.changelog).toMatch(
      /^- removed `refresh-test:q:2`: its source row is no longer in q\.json \(sha256 [0-9a-f]{12}\)$/m,
    );
    expect(v3.changelog).toMatch(/^- changed `refresh-test:r:0`: .*question/m);
  });
});
