/**
 * SWE-Bench 5G date windows (issue 32): the `--after` parser refuses what is not a date (with the
 * accepted forms) and reads the same instant written with different zones alike; a day cutoff
 * excludes that whole day; the instance date is the earliest of issue and PR; quarters are UTC
 * (an offset date near a quarter end lands in the right one); a release gets one window config per
 * quarter with its counts in the card and manifest; and a release collected from a real store and
 * a real git mirror carries the issue, merge and base commit dates in UTC.
 */
import { describe, it, expect } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  instanceDate,
  isAfter,
  parseAfter,
  quarterOf,
  selectAfter,
  windowCounts,
  windowStart,
} from '../../datasets/swe-bench-5g/dates.js';
import { swe5gDataset } from '../../datasets/index.js';
import { planRelease } from '../../stages/release/assemble.js';
import { parquetToRows } from '../../stages/release/parquet.js';
import { swe5gEntry, swe5gRowOf } from '../../stages/swe5g/dataset.js';
import { candidateDates } from '../../stages/swe5g/row-dates.js';
import { mirrorPath } from '../../stages/swe5g/resolve/resolve.js';
import { openState } from '../../pipeline/state.js';
import { storeReader } from '../../pipeline/runner.js';
import { ConfigError } from '../../pipeline/errors.js';
import { swe5gConfigSchema } from '../../stages/swe5g/config.js';
import { commit, git } from '../fixtures/git-repo.js';
import { validated } from '../stages/release/rows.js';

describe('--after DATE', () => {
  it('refuses what is not a date, naming the flag and the accepted forms', () => {
    for (const bad of [
      'yesterday',
      '',
      '2024-13-01',
      '2024-02-30',
      '2023-02-29',
      '2024-6-1',
      '30/06/2024',
      '2024-06-30T25:00Z',
      '2024-06-30 12:00Z',
    ]) {
      expect(() => parseAfter(bad), bad).toThrow(ConfigError);
      expect(() => parseAfter(bad), bad).toThrow(
        /--after: ".*" is not a (date|calendar day|time of day)/,
      );
    }
    // a time without a zone is ambiguous: refused with the reason
    expect(() => parseAfter('2024-06-30T12:00:00', 'swe5g.evaluation.after')).toThrow(
      /swe5g\.evaluation\.after: "2024-06-30T12:00:00" has no time zone/,
    );
    // a leap day is a day
    expect(parseAfter('2024-02-29').from).toBe('2024-03-01T00:00:00Z');
  });

  it('swe5g.evaluation.after is checked when the configuration is read', () => {
    const bad = swe5gConfigSchema.safeParse({ evaluation: { after: '2024-02-30' } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => i.message)).toEqual([
      expect.stringMatching(/^swe5g\.evaluation\.after: "2024-02-30" is not a calendar day/),
    ]);
    expect(swe5gConfigSchema.parse({ evaluation: { after: '2024-06-30' } }).evaluation.after).toBe(
      '2024-06-30',
    );
  });

  it('a day keeps instances from the next day on; a time keeps strictly later ones, any zone', () => {
    const day = parseAfter('2024-06-30');
    expect(day).toEqual({ given: '2024-06-30', from: '2024-07-01T00:00:00Z', inclusive: true });
    expect(isAfter('2024-06-30T23:59:59Z', day)).toBe(false);
    expect(isAfter('2024-07-01T00:00:00Z', day)).toBe(true);
    // the same instant written in three zones is one bound
    const forms = ['2024-06-30T12:00:00Z', '2024-06-30T20:00+08:00', '2024-06-30T05:00:00-07:00'];
    const froms = forms.map((f) => parseAfter(f).from);
    expect(new Set(froms)).toEqual(new Set(['2024-06-30T12:00:00Z']));
    const t = parseAfter(forms[1]!);
    expect(isAfter('2024-06-30T12:00:00Z', t)).toBe(false);
    expect(isAfter('2024-06-30T12:00:01Z', t)).toBe(true);
    // a row date with an offset compares as the instant it is
    expect(isAfter('2024-07-01T06:00:00+08:00', day)).toBe(false); // 2024-06-30T22:00Z
    expect(isAfter('', day)).toBe(false);
  });

  it('selects by the instance date and counts what it left out and why', () => {
    const rows = [
      { id: 'a', created_at: '2024-08-01T00:00:00Z', issue_created_at: '2024-05-01T00:00:00Z' },
      { id: 'b', created_at: '2024-08-01T00:00:00Z', issue_created_at: '' },
      { id: 'c', created_at: '2024-09-01T00:00:00Z', issue_created_at: '2024-10-01T00:00:00Z' },
      { id: 'd', created_at: '', issue_created_at: '' },
    ];
    // a: its issue was public before the cutoff, so the fix's later PR does not make it clean
    expect(instanceDate(rows[0]!)).toBe('2024-05-01T00:00:00Z');
    expect(instanceDate(rows[2]!)).toBe('2024-09-01T00:00:00Z');
    const s = selectAfter(rows, parseAfter('2024-06-30'), instanceDate);
    expect(s.kept.map((r) => r.id)).toEqual(['b', 'c']);
    expect(s).toMatchObject({ before: 1, undated: 1 });
  });

  it('windows are UTC quarters', () => {
    expect(quarterOf('2024-03-31T23:59:59Z')).toBe('2024-Q1');
    expect(quarterOf('2024-04-01T00:00:00Z')).toBe('2024-Q2');
    // 01:00 on April 1st in +02:00 is still March 31st in UTC
    expect(quarterOf('2024-04-01T01:00:00+02:00')).toBe('2024-Q1');
    expect(quarterOf('2025-12-31T23:00:00-05:00')).toBe('2026-Q1');
    expect(windowStart('2024-Q3')).toBe('2024-07-01T00:00:00Z');
    expect(() => windowStart('2024Q3')).toThrow(/not a window name/);
    expect(
      windowCounts(
        ['2024-02-01T00:00:00Z', '2024-01-05T00:00:00Z', '2024-07-01T00:00:00Z', ''],
        (d) => d,
      ),
    ).toEqual([
      { name: '2024-Q1', rows: 2, first: '2024-01-05T00:00:00Z', last: '2024-02-01T00:00:00Z' },
      { name: '2024-Q3', rows: 1, first: '2024-07-01T00:00:00Z', last: '2024-07-01T00:00:00Z' },
    ]);
  });
});

describe('window configs of a release', () => {
  it('one Hub config per quarter, counted in the card and the manifest; undated rows in none', async () => {
    const dated = (pr: number, created: string, issue: string) =>
      swe5gRowOf(validated('free5gc/amf', pr, { created_at: created }), 'git', null, {
        issue_created_at: issue,
        merged_at: '',
        base_commit_date: '',
      })!;
    const rows = [
      dated(1, '2024-02-10T00:00:00Z', '2024-01-20T00:00:00Z'),
      dated(2, '2024-03-01T00:00:00Z', ''),
      dated(3, '2024-08-01T00:00:00Z', '2024-07-02T09:00:00Z'),
      { ...dated(4, '2024-08-01T00:00:00Z', ''), created_at: 'unknown' },
    ];
    const plan = planRelease({
      dataset: swe5gDataset as never,
      version: '1.0.0',
      rows,
      createdAt: '2026-12-01T00:00:00Z',
      provenance: {
        gitSha: null,
        configHash: 'c',
        stageVersions: {},
        inputHashes: {},
        settings: {},
        profile: null,
        provenanceNotes: [],
        sample: null,
        models: { generator: [], targets: [] },
      },
      funnel: [],
      licenseEvidence: () => 'e',
      verify: null,
      snapshotLimitations: [],
      previous: null,
    });
    const card = new TextDecoder().decode(plan.files.find((f) => f.path === 'README.md')!.bytes);
    const fm = parse(card.split('---')[1]!) as { configs: { config_name: string }[] };
    expect(fm.configs.map((c) => c.config_name)).toEqual(['all', 'free5gc', '2024-Q1', '2024-Q3']);
    expect(card).toContain('## Date windows');
    expect(card).toContain(
      '| 2024-Q1 | 2 | 2024-01-20T00:00:00Z | 2024-03-01T00:00:00Z | 2024-01-20 |',
    );
    expect(card).toContain(
      '| 2024-Q3 | 1 | 2024-07-02T09:00:00Z | 2024-07-02T09:00:00Z | 2024-07-02 |',
    );
    expect(card).toContain('clean for models whose training data ends before 2024-01-20');
    expect(card).toContain('1 row(s) carry no window date');
    expect(plan.manifest.counts).toMatchObject({
      by_window: { '2024-Q1': 2, '2024-Q3': 1 },
      undated: 1,
    });
    const q3 = plan.files.find((f) => f.path === 'windows/2024-Q3/test.parquet')!;
    const back = await parquetToRows(q3.bytes, swe5gDataset.fields);
    expect(back.map((r) => r.instance_id)).toEqual(['free5gc__amf-3']);
  });
});

describe('dates collected into rows', () => {
  it('issue, merge and base commit dates in UTC from the candidate and the real mirror', () => {
    expect(
      candidateDates({
        issues: [
          { created_at: '2024-03-02T10:00:00+08:00' } as never,
          { created_at: '2024-03-01T23:00:00-07:00' } as never,
        ],
        merged_at: '2024-03-05T12:00:00+02:00',
      }),
    ).toEqual({ issue_created_at: '2024-03-02T02:00:00Z', merged_at: '2024-03-05T10:00:00Z' });

    const state = mkdtempSync(join(tmpdir(), 'swe5g-dates-'));
    const src = join(state, 'src');
    mkdirSync(src);
    git(src, 'init', '-q');
    commit(src, { 'a.go': 'package a\n' }, 'init');
    // a base commit made in +08:00: the row carries it in UTC
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'base'], {
      cwd: src,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Dev',
        GIT_AUTHOR_EMAIL: 'd@x',
        GIT_COMMITTER_NAME: 'Dev',
        GIT_COMMITTER_EMAIL: 'd@x',
        GIT_COMMITTER_DATE: '2024-03-01T18:00:00+08:00',
      },
    });
    const base = git(src, 'rev-parse', 'HEAD');
    execFileSync('git', ['clone', '-q', '--bare', src, mirrorPath(state, 'free5gc/amf')]);
    const st = openState(state);
    try {
      const v = validated('free5gc/amf', 161, {
        base_commit: base,
        created_at: '2024-03-03T09:00:00+09:00',
      });
      const other = validated('free5gc/amf', 162); // its base commit is not in the mirror
      const put = (stage: string, key: string, output: unknown) => {
        const input = JSON.stringify({ id: key });
        st.store.planItem(stage, key, 1, input, input, false);
        st.store.startItem(stage, key, 'a', 'r');
        st.store.finishItem(stage, key, 'a', { state: 'done', output });
      };
      put('swe5g.filter', v.instance_id, {
        // the candidate's issue text, which the release reads as the current statement
        problem_statement: v.problem_statement,
        hints_text: '',
        incomplete: false,
        source: 'git',
        issues: [{ created_at: '2024-02-28T12:00:00-05:00' }],
        merged_at: '2024-03-04T00:00:00+01:00',
      });
      for (const x of [v, other]) put('swe5g.validate', x.instance_id, x);
      const store = storeReader(st.store, () => 1);
      const got = swe5gEntry.collect([...store.outputsNamed('swe5g.validate')], {
        store,
        // rows never audited: this test reads their dates
        config: { swe5g: { audit: { release_unaudited: true } } },
        stateDir: state,
        log: () => undefined,
      });
      const row = got.rows.find((r) => r.instance_id === v.instance_id)!;
      expect(row).toMatchObject({
        created_at: '2024-03-03T00:00:00Z',
        issue_created_at: '2024-02-28T17:00:00Z',
        merged_at: '2024-03-03T23:00:00Z',
        base_commit_date: '2024-03-01T10:00:00Z',
      });
      // no candidate, no commit in the mirror: unknown, never made up
      expect(got.rows.find((r) => r.instance_id === other.instance_id)).toMatchObject({
        issue_created_at: '',
        merged_at: '',
        base_commit_date: '',
      });
    } finally {
      st.close();
    }
  });
});
