/**
 * What kind of file a changed path is, for the filter's rules "the PR modifies non-test source
 * files" (SWE-Bench 5G paper, section "Pipeline", step 2) and "not documentation/CI-only".
 */
import type { RepoLanguage } from '../types.js';

/** Kind of a changed file. */
export type FileKind = 'test' | 'source' | 'docs' | 'ci' | 'deps' | 'other';

const SOURCE_EXT = /\.(go|c|h|cc|cpp|cxx|hpp|hh|py|pyx|rs|java|js|ts|sh|proto|asn1?)$/i;
const DOCS =
  /(^|\/)(docs?|documentation)\/|\.(md|rst|txt|adoc|png|jpe?g|gif|svg|pdf)$|(^|\/)(LICENSE|NOTICE|AUTHORS|CHANGELOG|CODEOWNERS)[^/]*$/i;
const CI =
  /(^|\/)\.(github|gitlab|circleci|travis)|(^|\/)(\.gitlab-ci\.ya?ml|\.travis\.ya?ml|\.golangci\.ya?ml|\.pre-commit-config\.yaml|codecov\.ya?ml|azure-pipelines\.yml|Jenkinsfile|\.gitignore|\.dockerignore|Dockerfile[^/]*|docker-compose[^/]*)$/i;
const DEPS =
  /(^|\/)(go\.mod|go\.sum|requirements[^/]*\.txt|setup\.cfg|pyproject\.toml|poetry\.lock|Pipfile(\.lock)?|subprojects\/[^/]+\.wrap)$|(^|\/)vendor\//i;

/**
 * Test files by language: Go `*_test.go` and `testdata/`; Python `test_*.py`, `*_test.py`,
 * `tests/`, `conftest.py`; C `tests/` or `test/` folders (Open5GS keeps its tests in `tests/`).
 */
export function isTestPath(path: string, language: RepoLanguage): boolean {
  if (/(^|\/)(testdata|tests?|testing)\//i.test(path)) return true;
  const base = path.split('/').pop() ?? path;
  if (language === 'go') return /_test\.go$/.test(base);
  if (language === 'python') return /^test_.*\.py$|_test\.py$|^conftest\.py$/.test(base);
  return /^test[-_].*\.[ch]$|[-_]test\.[ch]$/.test(base);
}

/** Classifies one changed path (test before docs/ci/deps before source). */
export function fileKind(path: string, language: RepoLanguage): FileKind {
  if (CI.test(path)) return 'ci';
  if (DEPS.test(path)) return 'deps';
  if (DOCS.test(path)) return 'docs';
  if (isTestPath(path, language)) return 'test';
  if (SOURCE_EXT.test(path)) return 'source';
  return 'other';
}
