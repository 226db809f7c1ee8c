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
});
