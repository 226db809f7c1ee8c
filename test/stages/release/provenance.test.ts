/**
 * What a release says about where its rows came from: `sampleOf` reads the run manifests of a real
 * state folder (as `telebench run` writes them) to tell a `--limit` sample from a whole run;
 * `problemStatementSource` names the issues API or the issues file.
 */
import { describe, it, expect } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildManifest } from '../../../pipeline/manifest.js';
import { sampleOf } from '../../../stages/release/collect.js';
import { problemStatementSource } from '../../../stages/swe5g/dataset.js';

const BRANCH = ['resilience.load', 'resilience.generate', 'resilience.truncate'];

/** Writes `<state>/runs/<id>/manifest.json` the way `telebench run` does. */
function run(state: string, id: string, at: string, argv: string[], stages: string[]): void {
  const m = buildManifest({
    runId: id,
    pipeline: 'resilience',
    argv,
    configFile: join(state, 'config.yaml'),
    config: {},
    stageVersions: Object.fromEntries(stages.map((s) => [s, 1])),
  });
  mkdirSync(join(state, 'runs', id), { recursive: true });
  writeFileSync(join(state, 'runs', id, 'manifest.json'), JSON.stringify({ ...m, startedAt: at }));
}

describe('sampleOf: a release built by --limit runs says so', () => {
  it('the latest run of each stage decides; a release-only run after it changes nothing', () => {
    const state = mkdtempSync(join(tmpdir(), 'telebench-sample-'));
    expect(sampleOf(state, BRANCH)).toBeNull(); // no runs folder
    run(state, 'r1', '2026-01-01T00:00:00Z', ['run', 'resilience', '--limit', '12'], BRANCH);
    run(
      state,
      'r2',
      '2026-01-01T01:00:00Z',
      ['run', 'all', '--only', 'release.resilience'],
      ['release.resilience'],
    );
    expect(sampleOf(state, BRANCH)).toEqual({ limits: [12], runs: ['r1'] });
    // a later run of one stage with another limit: both limits are named
    run(
      state,
      'r3',
      '2026-01-01T02:00:00Z',
      ['run', 'resilience', '--limit=50'],
      ['resilience.generate'],
    );
    expect(sampleOf(state, BRANCH)).toEqual({ limits: [12, 50], runs: ['r1', 'r3'] });
    // a whole run of every stage afterwards: not a sample any more
    run(state, 'r4', '2026-01-01T03:00:00Z', ['run', 'resilience'], BRANCH);
    expect(sampleOf(state, BRANCH)).toBeNull();
    // a manifest cut by a kill is passed over, the others still count
    mkdirSync(join(state, 'runs', 'r5'));
    writeFileSync(join(state, 'runs', 'r5', 'manifest.json'), '{"runId": "r5", "argv": [');
    expect(sampleOf(state, BRANCH)).toBeNull();
  });
});

describe('problemStatementSource', () => {
  it('API-mined PRs have issue text from the issues API, git-mined ones from the issues file', () => {
    expect(problemStatementSource('Crash on nil', 'api')).toBe('issues_api');
    expect(problemStatementSource('Crash on nil', 'git')).toBe('issues_file');
    expect(problemStatementSource('  ', 'git')).toBe('none');
  });
});
