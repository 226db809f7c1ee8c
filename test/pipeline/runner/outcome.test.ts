import { describe, it, expect } from 'vitest';
import { blockedBehind, exitCodeOf, type StageOutcome } from '../../../pipeline/runner/outcome.js';

const done = (failedInPlan = 0): StageOutcome => ({
  status: 'completed',
  counts: {},
  ran: 1,
  failedInPlan,
});
const blocked: StageOutcome = { status: 'blocked', reason: 'docker', service: 'docker' };
const run = { dryRun: false, aborted: false };

describe('exitCodeOf', () => {
  it('is 0 when every stage completed without failures of this plan', () => {
    expect(exitCodeOf([done(), done()], run)).toBe(0);
  });
  it('is 1 for failed items of this run, but not in a dry run', () => {
    expect(exitCodeOf([done(), done(2)], run)).toBe(1);
    expect(exitCodeOf([done(2)], { ...run, dryRun: true })).toBe(0);
  });
  it('is 3 when a stage is blocked, even with failures elsewhere', () => {
    expect(exitCodeOf([done(1), blocked], run)).toBe(3);
  });
  it('is 130 / 143 when aborted by SIGINT / SIGTERM, over everything else', () => {
    expect(exitCodeOf([blocked], { ...run, aborted: true, abortReason: 'SIGINT' })).toBe(130);
    expect(exitCodeOf([done(1)], { ...run, aborted: true, abortReason: 'SIGTERM' })).toBe(143);
  });
});

describe('blockedBehind', () => {
  it('names the need that stopped at preflight as the root', () => {
    const b = blockedBehind('swe5g.build', blocked);
    expect(b.root).toBe('swe5g.build');
    expect(b.because).toBe('needs swe5g.build, which stopped at preflight');
    expect(b.outcome).toEqual({ status: 'blocked', reason: b.because, root: 'swe5g.build' });
  });
  it('passes the root along a chain of blocked stages', () => {
    const behind = blockedBehind('a', blocked).outcome;
    const b = blockedBehind('b', behind);
    expect(b.because).toBe('needs b, which waits on a (stopped at preflight)');
    expect(b.root).toBe('a');
  });
  it('says when the need was interrupted', () => {
    const b = blockedBehind('a', { status: 'interrupted', counts: {}, ran: 0 });
    expect(b.because).toBe('needs a, which was interrupted');
    expect(b.root).toBeUndefined();
  });
});
