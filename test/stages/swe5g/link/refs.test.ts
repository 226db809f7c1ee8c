import { describe, it, expect } from 'vitest';
import { refsInText, refsInBranch, mergeEvidence } from '../../../../stages/swe5g/link/refs.js';
import { evidenceOf } from '../../../../stages/swe5g/link/link.js';

describe('issue references', () => {
  it('finds closing keywords in every form, cross-repository refs and issue URLs', () => {
    const text = [
      'Fixes free5gc/free5gc#641',
      'closed #7, resolves: #8',
      'This FIXED https://github.com/free5gc/free5gc/issues/700',
      'see also free5gc/smf#3',
    ].join('\n');
    const ev = refsInText(text, 'pr_body', 'free5gc/amf');
    expect(ev.map((e) => [e.issue, e.kind, e.confidence])).toEqual([
      ['free5gc/free5gc#641', 'closing_keyword', 0.9],
      ['free5gc/amf#7', 'closing_keyword', 0.9],
      ['free5gc/amf#8', 'closing_keyword', 0.9],
      ['free5gc/free5gc#700', 'closing_keyword', 0.9],
      ['free5gc/smf#3', 'mention', 0.5],
    ]);
  });

  it('does not read words that merely contain a keyword or numbers inside words', () => {
    expect(
      refsInText('prefix #12 and suffixes#13, hotfix-9, abc#5', 'x', 'o/r').map((e) => e.issue),
    ).toEqual(['o/r#12']);
    expect(refsInText('Merged in bugfix/FR5GC-1250 (pull request #53)', 'x', 'o/r')).toEqual([]);
    expect(refsInText('Bugfixes for #4', 'x', 'o/r')).toEqual([
      expect.objectContaining({ kind: 'mention', issue: 'o/r#4' }),
    ]);
  });

  it('reads issue numbers in branch names as weak evidence, not versions or years', () => {
    expect(refsInBranch('fix/1079-reject-nia0', 'free5gc/free5gc')).toEqual([
      expect.objectContaining({
        issue: 'free5gc/free5gc#1079',
        kind: 'branch_name',
        confidence: 0.3,
      }),
    ]);
    expect(refsInBranch('issue-12', 'o/r')[0]?.issue).toBe('o/r#12');
    expect(refsInBranch('release/v1.2', 'o/r')).toEqual([]);
    expect(refsInBranch('update-2024', 'o/r')).toEqual([]);
    expect(refsInBranch('main', 'o/r')).toEqual([]);
    expect(refsInBranch('bugfix/FR5GC-1250-dont-quit', 'o/r')).toEqual([]);
    expect(refsInBranch('FR5GC-1250/fix-77', 'o/r')[0]?.issue).toBe('o/r#77');
  });

  it('keeps every source of evidence, strongest first, and drops references to PRs', () => {
    const ev = evidenceOf(
      {
        repo: 'free5gc/amf',
        pr_title: 'fix: reject NIA0 (#225)',
        pr_body: 'Fixes free5gc/free5gc#1079, follows #220',
        commit_messages: ['gmm: skip NIA0\n\nRelated to free5gc/free5gc#1079'],
        head_ref: 'fix/1079-reject-nia0',
        merge_commit: 'x',
      },
      'free5gc/free5gc',
      new Set([220, 225]),
    );
    expect(ev.map((e) => [e.issue, e.where, e.kind])).toEqual([
      ['free5gc/free5gc#1079', 'pr_body', 'closing_keyword'],
      ['free5gc/free5gc#1079', 'commit[0]', 'mention'],
      ['free5gc/free5gc#1079', 'branch:fix/1079-reject-nia0', 'branch_name'],
    ]);
    expect(mergeEvidence([ev, ev])).toHaveLength(3);
  });

  it('counts a branch-name number only in an issue-like position (issue 16, false links)', () => {
    const num = (b: string): string | undefined => refsInBranch(b, 'free5gc/free5gc')[0]?.issue;
    // real free5GC branch names whose numbers are not issues
    for (const b of [
      'fix/correct-http-204-response',
      'fix/smf-500-malformed-pdu-session-establishment',
      'fix/udm/sdm-notify-204-nil-guard',
      'fix/204-c-status-reply',
      'patch-2',
      'pr-83',
      'fix/linter-error-0103',
    ])
      expect([b, num(b)]).toEqual([b, undefined]);
    // issue-like positions
    expect(num('fix/1079-reject-nia0')).toBe('free5gc/free5gc#1079');
    expect(num('issue-1079')).toBe('free5gc/free5gc#1079');
    expect(num('fix/issue587')).toBe('free5gc/free5gc#587');
    expect(num('fix/904')).toBe('free5gc/free5gc#904');
    expect(num('fix/handover-ack-nil-target-ue-1018')).toBe('free5gc/free5gc#1018');
    expect(num('refactor/switch-dependency-from-smf-to-util-#734')).toBe('free5gc/free5gc#734');
    expect(num('7-idgenerator-leak-1')).toBe('free5gc/free5gc#7');
    expect(refsInBranch('fix/1079-reject-nia0', 'free5gc/free5gc')[0]!.note).toMatch(
      /first token of the last segment.*kept only if free5gc\/free5gc#1079 exists/,
    );
  });

  it('reads a bare #N of an NF repository in the issues repository, both candidates when ambiguous', () => {
    const bare = { issuesRepo: 'free5gc/free5gc', ownMax: 95, ownPrs: new Set([60, 94]) };
    const ev = refsInText('Fixes #1122, see #50 and #60', 'commit[0]', 'free5gc/udm', bare);
    expect(ev.map((e) => [e.issue, e.kind, e.candidates])).toEqual([
      ['free5gc/free5gc#1122', 'closing_keyword', undefined],
      ['free5gc/free5gc#50', 'mention', ['free5gc/free5gc#50', 'free5gc/udm#50']],
      ['free5gc/udm#60', 'mention', undefined],
    ]);
    expect(ev[0]!.note).toMatch(/free5gc\/udm has no #1122 \(its highest known number is 95\)/);
    // where issues live in the PR's repository, GitHub's rule stands
    expect(
      refsInText('Fixes #1122', 'x', 'open5gs/open5gs', { ...bare, issuesRepo: 'open5gs/open5gs' }),
    ).toEqual([expect.objectContaining({ issue: 'open5gs/open5gs#1122' })]);
    expect(refsInText('Fixes #1122', 'x', 'open5gs/open5gs')[0]!.note).toBeUndefined();
  });
});
