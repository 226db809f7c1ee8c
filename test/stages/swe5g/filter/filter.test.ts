import { describe, it, expect } from 'vitest';
import { judge, FILTER_REASONS } from '../../../../stages/swe5g/filter/filter.js';
import { fileKind, isTestPath } from '../../../../stages/swe5g/filter/files.js';
import { filterSchema } from '../../../../stages/swe5g/config.js';
import type { LinkedPR, LinkedIssue } from '../../../../stages/swe5g/types.js';

const rules = filterSchema.parse({});
const BODY = Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ');

function issue(over: Partial<LinkedIssue> = {}): LinkedIssue {
  return {
    repo: 'free5gc/free5gc',
    number: 641,
    title: 'AMF panics',
    body: BODY,
    labels: [],
    state: 'closed',
    created_at: '2025-01-01T00:00:00Z',
    ...over,
  };
}

function pr(over: Partial<LinkedPR> = {}): LinkedPR {
  return {
    instance_id: 'free5gc__amf-161',
    alias: 'amf_pr161',
    repo: 'free5gc/amf',
    registry_id: 'free5gc/amf',
    language: 'go',
    nf: 'AMF',
    license: 'Apache-2.0',
    pr_number: 161,
    merge_commit: 'a'.repeat(40),
    base_commit: 'b'.repeat(40),
    pr_head: 'c'.repeat(40),
    merge_style: 'merge',
    pr_title: 'fix',
    pr_body: 'Fixes free5gc/free5gc#641',
    head_ref: 'main',
    author: 'dev',
    author_is_bot: false,
    commit_messages: [],
    changed_files: [{ path: 'internal/ngap/handler.go', additions: 1, deletions: 1 }],
    created_at: '2025-01-01T00:00:00Z',
    merged_at: '2025-01-03T00:00:00Z',
    updated_at: '2025-01-03T00:00:00Z',
    source: 'api',
    foreign_forge: false,
    raw_blobs: [],
    closing_refs: [],
    issues: [issue()],
    links: [
      {
        kind: 'closing_keyword',
        where: 'pr_body',
        text: 'Fixes free5gc/free5gc#641',
        issue: 'free5gc/free5gc#641',
        confidence: 0.9,
      },
    ],
    other_prs: [],
    issue_comments: [
      {
        issue: 'free5gc/free5gc#641',
        author: 'm',
        created_at: '2025-01-02T00:00:00Z',
        body: 'pcap?',
      },
      {
        issue: 'free5gc/free5gc#641',
        author: 'm',
        created_at: '2025-01-04T00:00:00Z',
        body: 'thanks',
      },
    ],
    ...over,
  };
}

const reason = (p: LinkedPR, r = rules) => {
  const v = judge(p, r);
  return v.keep ? 'kept' : v.reason;
};

describe('swe5g.filter rules', () => {
  it('keeps a clear, source-modifying fix and builds the Candidate', () => {
    const v = judge(pr(), rules);
    expect(v.keep).toBe(true);
    if (!v.keep) return;
    expect(v.candidate.problem_statement).toBe(`AMF panics\n\n${BODY}`);
    expect(v.candidate.hints_text).toBe('pcap?');
    expect(v.candidate.incomplete).toBe(false);
  });

  it('rejects each case with its reason code', () => {
    expect(reason(pr({ foreign_forge: true }))).toBe('foreign_forge_pr');
    expect(reason(pr({ merge_commit: '' }))).toBe('not_merged');
    expect(reason(pr({ author: 'renovate-bot' }))).toBe('bot_author');
    expect(reason(pr({ author_is_bot: true }))).toBe('bot_author');
    expect(reason(pr({ issues: [], links: [] }))).toBe('no_linked_issue');
    expect(reason(pr({ issues: [issue({ state: 'open' })] }))).toBe('issue_open');
    expect(
      reason(
        pr({
          changed_files: [
            { path: 'docs/x.md', additions: 1, deletions: 0 },
            { path: '.github/workflows/ci.yml', additions: 1, deletions: 0 },
          ],
        }),
      ),
    ).toBe('docs_or_ci_only');
    expect(
      reason(
        pr({
          changed_files: [{ path: 'internal/ngap/handler_test.go', additions: 9, deletions: 0 }],
        }),
      ),
    ).toBe('no_source_change');
    const many = Array.from({ length: 16 }, (_, i) => ({
      path: `p${i}.go`,
      additions: 1,
      deletions: 0,
    }));
    expect(reason(pr({ changed_files: many }))).toBe('too_many_files');
    expect(reason(pr({ changed_files: [{ path: 'a.go', additions: 500, deletions: 101 }] }))).toBe(
      'too_many_lines',
    );
    expect(reason(pr({ issues: [issue({ body: 'it crashes' })] }))).toBe('unclear_issue');
  });

  it('thresholds are configurable', () => {
    const loose = filterSchema.parse({
      min_issue_body_words: 2,
      max_files: 20,
      max_changed_lines: 1000,
      require_closed_issue: false,
    });
    expect(reason(pr({ issues: [issue({ body: 'it crashes' })] }), loose)).toBe('kept');
    expect(reason(pr({ issues: [issue({ state: 'open' })] }), loose)).toBe('kept');
    expect(
      reason(pr({ changed_files: [{ path: 'a.go', additions: 500, deletions: 101 }] }), loose),
    ).toBe('kept');
  });

  it('git-only PRs: kept as incomplete without issue text, unless keep_git_without_issue is off', () => {
    const g = pr({ source: 'git', issues: [], links: [], issue_comments: [] });
    const v = judge(g, rules);
    expect(v.keep && v.candidate.incomplete && v.candidate.problem_statement === '').toBe(true);
    const strict = filterSchema.parse({ keep_git_without_issue: false });
    expect(reason(g, strict)).toBe('no_linked_issue');
    // with a reference (but no text) it is kept as incomplete even when strict
    expect(reason(pr({ source: 'git', issues: [] }), strict)).toBe('kept');
  });

  it('a PR fixing two issues states both; closed ones first', () => {
    const v = judge(
      pr({ issues: [issue({ number: 701, title: 'B' }), issue({ number: 700, title: 'A' })] }),
      rules,
    );
    expect(v.keep && v.candidate.problem_statement.startsWith('A\n\n')).toBe(true);
    expect(v.keep && v.candidate.problem_statement).toContain('\n\nB\n\n');
  });

  it('lists every reason code once', () => {
    expect(new Set(FILTER_REASONS).size).toBe(FILTER_REASONS.length);
  });
});

describe('file kinds', () => {
  it('classifies tests, docs, CI, dependencies and source per language', () => {
    expect(isTestPath('internal/ngap/handler_test.go', 'go')).toBe(true);
    expect(isTestPath('lte/gateway/python/magma/mobilityd/tests/test_ip.py', 'python')).toBe(true);
    expect(isTestPath('tests/amf/test-5gc.c', 'c')).toBe(true);
    expect(fileKind('internal/ngap/handler.go', 'go')).toBe('source');
    expect(fileKind('go.sum', 'go')).toBe('deps');
    expect(fileKind('.github/workflows/go.yml', 'go')).toBe('ci');
    expect(fileKind('Dockerfile', 'go')).toBe('ci');
    expect(fileKind('docs/guide.md', 'c')).toBe('docs');
    expect(fileKind('src/amf/ngap-handler.c', 'c')).toBe('source');
    expect(fileKind('config/amfcfg.yaml', 'go')).toBe('other');
  });
});
