/**
 * What a window refresh says about the candidates of its window (issue msgs: `nothing new` named
 * neither the three PRs that landed after the cutoff nor why none became a row). Over a real
 * SQLite store holding the records the runner leaves: SWE-Bench 5G's hooks find the PRs mined at
 * or after the window start and where each stopped (the filter's `no_linked_issue`, validation's
 * `build_failed_at_parent`, a failed build); the outcome text lists them (capped, `and N more`)
 * and says nothing of the kind for a sources dataset (TeleResilienceBench).
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../pipeline/store/store.js';
import { storeReader } from '../../../pipeline/runner.js';
import { swe5gRefresh } from '../../../stages/swe5g/refresh.js';
import { SWE5G_STAGES } from '../../../stages/swe5g/pipeline-stages.js';
import { windowReport } from '../../../stages/release/refresh.js';
import type { CandidateFate } from '../../../stages/release/entry.js';
import {
  outcomeText,
  windowLines,
  type WindowReport,
} from '../../../stages/release/refresh-report.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

type End = Parameters<Store['finishItem']>[3];

/** One item of `stage` as the runner leaves it (version 1, as the reader below reads). */
function put(store: Store, stage: string, key: string, end: End): void {
  store.planItem(stage, key, 1, `h-${stage}-${key}`, '{}', false);
  store.startItem(stage, key, `a-${key}`, 'run');
  store.finishItem(stage, key, `a-${key}`, end);
}
const done: End = { state: 'done', output: {} };
const skip = (reason: string): End => ({ state: 'skipped', reason, detail: `${reason} detail` });

/** Every stage after mining done for `key` up to `upTo` (exclusive), then `end` there. */
function through(store: Store, key: string, upTo: string | null, end?: End): void {
  for (const stage of SWE5G_STAGES.slice(1)) {
    if (stage === upTo) return put(store, stage, key, end!);
    put(store, stage, key, done);
  }
}

const SINCE = '2025-08-15T12:00:00.000Z';
const id = (n: number) => `free5gc__udm-${n}`;

function windowStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-refresh-window-'));
  made.push(dir);
  const store = new Store(join(dir, 'state.db'));
  // one mining item: the PR at the cutoff (released), three after it (+02:00 read in UTC), one before
  const prs = [
    { instance_id: id(90), merged_at: '2025-08-01T10:00:00Z' },
    { instance_id: id(100), merged_at: SINCE },
    { instance_id: id(101), merged_at: '2025-08-20T10:00:00+02:00' },
    { instance_id: id(102), merged_at: '2025-09-01T10:00:00Z' },
    { instance_id: id(103), merged_at: '2025-09-02T10:00:00Z' },
  ];
  put(store, 'swe5g.mine', 'free5gc/udm', { state: 'done', output: { prs } });
  through(store, id(100), null);
  through(store, id(101), 'swe5g.filter', skip('no_linked_issue'));
  through(store, id(102), 'swe5g.filter', skip('no_linked_issue'));
  through(store, id(103), 'swe5g.validate', skip('build_failed_at_parent'));
  return store;
}

describe('the window of a refresh (real store)', () => {
  it('counts the PRs that landed at or after the cutoff that N lacks, and says where each stopped', () => {
    const store = windowStore();
    const reader = storeReader(store, () => 1);
    expect(swe5gRefresh.landedSince(reader, SINCE)).toEqual([id(100), id(101), id(102), id(103)]);
    const w = windowReport(swe5gRefresh, reader, SINCE, {
      held: new Set([id(90), id(100)]),
      added: [],
      leftOut: [],
    });
    expect(w).toEqual({
      noun: 'PR',
      since: SINCE,
      landed: 3,
      rows: 0,
      leftOut: 0,
      stopped: [
        { key: id(101), stage: 'swe5g.filter', state: 'skipped', reason: 'no_linked_issue' },
        { key: id(102), stage: 'swe5g.filter', state: 'skipped', reason: 'no_linked_issue' },
        {
          key: id(103),
          stage: 'swe5g.validate',
          state: 'skipped',
          reason: 'build_failed_at_parent',
        },
      ],
    });
    const text = outcomeText({
      dataset: 'swe-bench-5g',
      previous: '1.0.0',
      nothingNew: `no swe-bench-5g row landed at or after ${SINCE} that 1.0.0 lacks`,
      refreshed: [],
      leftOut: [],
      window: w,
      failed: false,
      nextFrom: SINCE,
    });
    expect(text).toContain(
      `\n  3 PR(s) landed at or after ${SINCE} that 1.0.0 lacks: 0 validated for release, 0 validated but left out, 3 stopped before a row:\n` +
        `    ${id(101)} skipped at swe5g.filter: no_linked_issue\n` +
        `    ${id(102)} skipped at swe5g.filter: no_linked_issue\n` +
        `    ${id(103)} skipped at swe5g.validate: build_failed_at_parent\n`,
    );
    store.close();
  });

  it('a failed item, one not run, a row and a left-out one are told apart', () => {
    const store = windowStore();
    through(store, id(104), 'swe5g.build', {
      state: 'failed',
      error: { code: 'docker_build_failed' },
    });
    put(store, 'swe5g.link', id(105), done); // the run stopped before its filter
    const reader = storeReader(store, () => 1);
    // a PR mined with no record after mining: not run at the link
    expect(swe5gRefresh.fateOf(reader, id(90))).toMatchObject({
      stage: 'swe5g.link',
      state: 'not run',
    });
    const w = windowReport(swe5gRefresh, reader, SINCE, {
      held: new Set([id(100)]),
      added: [id(101)],
      leftOut: [{ reason: 'incomplete_left_out', keys: [id(102)], hint: undefined }],
    });
    // 104 and 105 were not mined: not in the window, not listed
    expect(w.stopped.map((f) => f.key)).toEqual([id(103)]);
    expect([w.landed, w.rows, w.leftOut]).toEqual([3, 1, 1]);
    expect(swe5gRefresh.fateOf(reader, id(104))).toEqual({
      key: id(104),
      stage: 'swe5g.build',
      state: 'failed',
      reason: 'docker_build_failed',
      retried: true,
    });
    expect(swe5gRefresh.fateOf(reader, id(105))).toMatchObject({
      stage: 'swe5g.filter',
      state: 'not run',
    });
    expect(swe5gRefresh.fateOf(reader, id(100))).toBeNull();
    store.close();
  });
});

describe('the window lines (pure)', () => {
  const base: WindowReport = {
    noun: 'PR',
    since: SINCE,
    landed: 0,
    rows: 0,
    leftOut: 0,
    stopped: [],
  };
  it('caps the list with "and N more", says a failed one is retried, and where the details are', () => {
    const stopped: CandidateFate[] = Array.from({ length: 13 }, (_, i) => ({
      key: id(200 + i),
      stage: 'swe5g.filter',
      state: 'skipped' as const,
      reason: 'no_linked_issue',
    }));
    stopped[0] = {
      key: id(200),
      stage: 'swe5g.build',
      state: 'failed',
      reason: 'docker_build_failed',
      retried: true,
    };
    // failed at the filter: the cutoff is not held there, so no retry is promised
    stopped[1] = { key: id(201), stage: 'swe5g.filter', state: 'failed', reason: 'x_failed' };
    const lines = windowLines({ ...base, landed: 13, stopped }, '1.0.0');
    expect(lines).toHaveLength(1 + 10 + 2);
    expect(lines[1]).toBe(
      `  ${id(200)} failed at swe5g.build (docker_build_failed): the next refresh retries it`,
    );
    expect(lines[2]).toBe(`  ${id(201)} failed at swe5g.filter (x_failed)`);
    expect(lines[11]).toBe('  and 3 more');
    expect(lines[12]).toContain('telebench items <stage>');
    expect(lines.join('\n')).not.toContain(id(210)); // the 11th is counted, not named
  });
  it('an empty window says 0 landed and nothing else', () => {
    expect(windowLines(base, '1.1.0')).toEqual([
      `0 PR(s) landed at or after ${SINCE} that 1.1.0 lacks`,
    ]);
  });
  it('a sources refresh (no window) says nothing of landing or PRs', () => {
    const text = outcomeText({
      dataset: 'teleresiliencebench',
      previous: '1.0.0',
      nothingNew:
        'no source file of teleresiliencebench changed, and they bring no new or changed row',
      refreshed: [],
      leftOut: [],
      window: null,
      failed: false,
      nextFrom: null,
    });
    expect(text).not.toMatch(/landed|PR\(s\)|stopped before/);
    expect(text.split('\n')).toHaveLength(2);
  });
});
