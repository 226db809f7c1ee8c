/**
 * The arithmetic of `telebench plan` (stages/swe5g/plan/estimate.ts, sample.ts, render.ts): the
 * Clopper-Pearson projection checked against its defining property through the binomial CDF (an
 * independent computation, not the beta quantile it is made with), the t interval against the
 * textbook quantile, a sample where everything is lost projecting 0 with a non-degenerate
 * interval, and the seeded sample's determinism and its errors.
 */
import { describe, it, expect } from 'vitest';
import jstat from 'jstat';
import {
  estimateProject,
  projectCount,
  projectTotal,
  type ProjectFunnel,
  type SampledOutcome,
} from '../../../../stages/swe5g/plan/estimate.js';
import { sampleKeys } from '../../../../stages/swe5g/plan/sample.js';
import { planMarkdown, totalOf } from '../../../../stages/swe5g/plan/render.js';

const { jStat } = jstat;

describe('projectCount (Clopper-Pearson projected to N)', () => {
  it('has the exact interval: P(X >= k | p_low) = P(X <= k | p_high) = 2.5%', () => {
    for (const [k, n] of [
      [3, 12],
      [7, 12],
      [1, 5],
      [29, 30],
    ] as const) {
      const N = 663;
      const p = projectCount(k, n, N);
      expect(p.point).toBeCloseTo((N * k) / n, 9);
      const lo = p.low / N;
      const hi = p.high / N;
      expect(1 - jStat.binomial.cdf(k - 1, n, lo)).toBeCloseTo(0.025, 6);
      expect(jStat.binomial.cdf(k, n, hi)).toBeCloseTo(0.025, 6);
      // a plain normal-approximation interval is not what this is (it differs at small n)
      const se = Math.sqrt(((k / n) * (1 - k / n)) / n);
      expect(Math.abs(lo - (k / n - 1.96 * se))).toBeGreaterThan(1e-3);
    }
  });

  it('projects a sample where all are lost to 0 with the upper end N (1 - 0.025^(1/n)), not [0, 0]', () => {
    const p = projectCount(0, 12, 1630);
    expect(p).toMatchObject({ k: 0, n: 12, point: 0, low: 0 });
    expect(p.high).toBeCloseTo(1630 * (1 - 0.025 ** (1 / 12)), 6);
    expect(p.high).toBeGreaterThan(300);
    // and all kept: the mirror image
    const q = projectCount(12, 12, 1630);
    expect(q.high).toBe(1630);
    expect(q.low).toBeCloseTo(1630 * 0.025 ** (1 / 12), 6);
  });

  it('is exact when the sample is the whole population, zero for an empty one', () => {
    expect(projectCount(2, 5, 5)).toEqual({ k: 2, n: 5, point: 2, low: 2, high: 2 });
    expect(projectCount(0, 0, 0)).toEqual({ k: 0, n: 0, point: 0, low: 0, high: 0 });
  });

  it('refuses k outside 0..n, an empty sample and a population smaller than the sample', () => {
    expect(() => projectCount(4, 3, 10)).toThrow(/k=4 of n=3/);
    expect(() => projectCount(-1, 3, 10)).toThrow(/k=-1/);
    expect(() => projectCount(0, 0, 10)).toThrow(/sample size 0/);
    expect(() => projectCount(1, 5, 4)).toThrow(/population 4 smaller than the sample 5/);
  });
});

describe('projectTotal (t interval of the mean, times N)', () => {
  it('matches the textbook interval (t 0.975, 4 dof = 2.776) with the finite-population correction', () => {
    const xs = [120, 95, 610, 130, 88];
    const N = 400;
    const s = projectTotal(xs, N);
    const mean = 1043 / 5;
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / 4);
    const half = 2.7764451 * (sd / Math.sqrt(5)) * Math.sqrt(395 / 399);
    expect(s.point).toBeCloseTo(N * mean, 6);
    expect(s.high).toBeCloseTo(N * (mean + half), 2);
    // the low end is clipped at 0 (seconds are never negative)
    expect(s.low).toBe(Math.max(0, N * (mean - half)));
  });

  it('has no interval from one value, is exact for a census, refuses an empty sample', () => {
    expect(projectTotal([30], 10)).toEqual({ point: 300, low: 0, high: Infinity });
    expect(projectTotal([1, 3], 2)).toEqual({ point: 4, low: 4, high: 4 });
    expect(() => projectTotal([], 10)).toThrow(/0 values/);
  });
});

describe('sampleKeys (seeded, without replacement)', () => {
  const keys = Array.from({ length: 50 }, (_, i) => `acme__nf-${i + 1}`);

  it('draws the same n distinct keys for the same seed whatever the listing order', () => {
    const a = sampleKeys(keys, 7, 42, 'acme');
    expect(new Set(a).size).toBe(7);
    expect(a.every((k) => keys.includes(k))).toBe(true);
    expect(sampleKeys([...keys].reverse(), 7, 42, 'acme')).toEqual(a);
    expect(sampleKeys(keys, 7, 43, 'acme')).not.toEqual(a);
    // another project's draw is seeded apart: the same keys, another sample
    expect(sampleKeys(keys, 7, 42, 'zeta')).not.toEqual(a);
    expect(sampleKeys(keys, 50, 1, 'acme')).toEqual([...keys].sort());
  });

  it('refuses a sample of 0 and one larger than the candidates, naming the project', () => {
    expect(() => sampleKeys(keys, 0, 1, 'acme')).toThrow(
      /--sample expects a whole number of at least 1/,
    );
    expect(() => sampleKeys(keys, 51, 1, 'acme')).toThrow(
      /--sample 51 is more than the 50 kept candidates of acme/,
    );
  });
});

const funnel = (kept: number): ProjectFunnel => ({
  project: 'magma',
  repos: ['magma/magma:lte/cloud/go'],
  mined: kept + 40,
  linked: 10,
  kept,
  incomplete: kept - 3,
  rejected: { no_source_change: 30, too_many_lines: 10 },
});

const lostAt = (id: string, stage: 'resolve' | 'build', reason: string): SampledOutcome => ({
  instance_id: id,
  done: stage === 'build' ? ['resolve', 'testgen'] : [],
  lost: { stage, reason },
  seconds: stage === 'build' ? { resolve: 2, testgen: 4, build: 300 } : { resolve: 1 },
});

const concurrency = { resolve: 4, testgen: 2, build: 2, validate: 2, audit: 2 };

describe('estimateProject', () => {
  it('projects a sample where everything is lost to 0 validated with the right interval and its losses', () => {
    const sample = [
      lostAt('m-1', 'resolve', 'git_archive_failed'),
      lostAt('m-2', 'build', 'env_build_failed'),
      lostAt('m-3', 'build', 'env_build_failed'),
      lostAt('m-4', 'resolve', 'git_archive_failed'),
    ];
    const e = estimateProject({ funnel: funnel(1630), sample, depth: 'validate', concurrency });
    expect(e.validated).toMatchObject({ k: 0, n: 4, point: 0, low: 0 });
    expect(e.validated!.high).toBeCloseTo(1630 * (1 - 0.025 ** (1 / 4)), 6);
    expect(e.tests).toMatchObject({ k: 2, n: 4, point: 815 });
    expect(e.built).toMatchObject({ k: 0, point: 0 });
    expect(e.losses.map((l) => [l.stage, l.reason, l.projected.k])).toEqual([
      ['build', 'env_build_failed', 2],
      ['resolve', 'git_archive_failed', 2],
    ]);
    // nothing built: no image measured, so no disk figure is made up
    expect(e.env_images).toBeNull();
    expect(e.disk_gib).toBeNull();
    // hours: (1/4 | 2/4 + 4/2 + 300/2) seconds per sampled candidate, times N
    const share = [0.25, 0.5 + 2 + 150, 0.5 + 2 + 150, 0.25];
    expect(e.hours.point).toBeCloseTo((1630 * (share.reduce((a, b) => a + b) / 4)) / 3600, 6);
    expect(e.hours.low).toBeLessThan(e.hours.point);
  });

  it('counts shared environments once, images and disk from the built sample', () => {
    const built = (id: string, env: string, validated: boolean): SampledOutcome => ({
      instance_id: id,
      done: validated
        ? ['resolve', 'testgen', 'build', 'validate']
        : ['resolve', 'testgen', 'build'],
      ...(validated ? {} : { lost: { stage: 'validate' as const, reason: 'p2p_fails_at_parent' } }),
      seconds: { resolve: 1, testgen: 2, build: 20, validate: 60 },
      build: {
        base_image: 'base:go1.21',
        base_bytes: 2 ** 30,
        env_image: env,
        env_bytes: 2 * 2 ** 30,
        env_seconds: 360,
        instance_bytes: 2 ** 28,
      },
    });
    const sample = [
      built('a', 'env:1', true),
      built('b', 'env:1', true),
      built('c', 'env:2', false),
    ];
    const e = estimateProject({ funnel: funnel(300), sample, depth: 'validate', concurrency });
    expect(e.validated).toMatchObject({ k: 2, n: 3, point: 200 });
    expect(e.env_images).toEqual({ point: 200, low: 2, high: 300 });
    expect(e.instance_images).toMatchObject({ k: 3, point: 300 });
    // 200 env images x 2 GiB + 300 instance layers x 0.25 GiB + one base of 1 GiB
    expect(e.disk_gib!.point).toBeCloseTo(200 * 2 + 300 * 0.25 + 1, 6);
    // env builds: 200 x 360 s / build concurrency 2, on top of the per-candidate shares
    const share = 1 / 4 + 2 / 2 + 20 / 2 + 60 / 2;
    expect(e.hours.point).toBeCloseTo((300 * share + (200 * 360) / 2) / 3600, 6);
  });

  it("at depth audit, projects what a default release keeps: a weak test is the audit's loss", () => {
    const through = (id: string, audit: 'ok' | 'weak' | 'pending'): SampledOutcome => ({
      instance_id: id,
      done: [
        'resolve',
        'testgen',
        'build',
        'validate',
        ...(audit === 'ok' ? ['audit' as const] : []),
      ],
      ...(audit === 'weak' ? { lost: { stage: 'audit' as const, reason: 'weak_f2p_test' } } : {}),
      seconds: {
        resolve: 1,
        testgen: 2,
        build: 20,
        validate: 60,
        ...(audit !== 'pending' ? { audit: 50 } : {}),
      },
    });
    const sample = [
      through('a', 'ok'),
      through('b', 'weak'),
      through('c', 'weak'),
      through('d', 'ok'),
    ];
    const e = estimateProject({ funnel: funnel(400), sample, depth: 'audit', concurrency });
    expect(e.validated).toMatchObject({ k: 4, n: 4, point: 400 });
    expect(e.audited).toMatchObject({ k: 2, n: 4, point: 200 });
    expect(e.audited!.low).toBeLessThan(200);
    expect(e.losses.map((l) => [l.stage, l.reason, l.projected.k])).toEqual([
      ['audit', 'weak_f2p_test', 2],
    ]);
    expect(e.timed_stages).toEqual(['resolve', 'testgen', 'build', 'validate', 'audit']);
    // the audit's seconds count at its concurrency
    const share = 1 / 4 + 2 / 2 + 20 / 2 + 60 / 2 + 50 / 2;
    expect(e.hours.point).toBeCloseTo((400 * share) / 3600, 6);
    // below depth audit nothing is said of it
    expect(
      estimateProject({ funnel: funnel(400), sample, depth: 'validate', concurrency }).audited,
    ).toBeNull();
    const md = planMarkdown({
      level: 0.95,
      depth: 'audit',
      sample_size: 4,
      seed: 1,
      concurrency: { resolve: 4, testgen: 2, build: 2, validate: 2, audit: 2 },
      projects: [e],
      total: totalOf([e]),
      not_mined: {},
    });
    expect(md).toContain('through validation and the fail-to-pass audit');
    expect(md).toContain('| kept by the audit |');
    expect(md).toContain('(4/4) | 200 [27-373] (2/4) |');
    expect(md).toContain('audit: weak_f2p_test 200 [');
  });

  it('leaves build, validation, images and disk unmeasured at depth testgen', () => {
    const sample: SampledOutcome[] = [
      { instance_id: 'x', done: ['resolve', 'testgen'], seconds: { resolve: 1, testgen: 3 } },
      {
        instance_id: 'y',
        done: ['resolve'],
        lost: { stage: 'testgen', reason: 'no_fix_pattern' },
        seconds: { resolve: 1, testgen: 1 },
      },
    ];
    const e = estimateProject({ funnel: funnel(10), sample, depth: 'testgen', concurrency });
    expect(e.tests).toMatchObject({ k: 1, n: 2, point: 5 });
    expect(e.validated).toBeNull();
    expect(e.built).toBeNull();
    expect(e.timed_stages).toEqual(['resolve', 'testgen']);
    const md = planMarkdown({
      level: 0.95,
      depth: 'testgen',
      sample_size: 2,
      seed: 1,
      concurrency: { resolve: 4, testgen: 2 },
      projects: [e],
      total: totalOf([e]),
      not_mined: { no_mirror: ['free5gc/smf'] },
    });
    expect(md).toContain('| magma | 10 | 10 [');
    expect(md).toContain('| n/a | ');
    expect(md).toContain('testgen: no_fix_pattern 5 [');
    expect(md).toContain('no_source_change 30, too_many_lines 10');
    expect(md).toContain('- no_mirror (1): free5gc/smf');
  });
});
