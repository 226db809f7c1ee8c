// Records the TeleResilienceBench authors' scorer's verdicts (their src/parsing.py, run by
// scripts/published-scorer.py) as the reference fixture test/fixtures/reference/trb-authors-verdicts.jsonl:
// on the hand-written cases of test/fixtures/trb-cases.ts and on the two shared models' experiment
// files (found through $TELEBENCH_DATA_ROOT or ../shared/data, test/fixtures/data-root.ts) — the
// rows CI can compare without their code. Needs their code (TELERESILIENCEBENCH_SRC or
// TELEBENCH_MIRRORS_DIR, test/fixtures/trb-authors.ts) and python3 with tiktoken.
// Run: TELEBENCH_MIRRORS_DIR=<mirrors> node --import tsx/esm scripts/record-trb-verdicts.ts
import {
  authorsCommit,
  authorsUnavailable,
  runAuthorsScorer,
  writeRows,
} from '../test/fixtures/trb-authors.js';
import { caseRows } from '../test/fixtures/trb-cases.js';
import { experimentFiles } from '../test/fixtures/data-root.js';
import {
  COLUMNS,
  REFERENCE,
  SHARED_MODELS,
  casesSha256,
  fileKey,
  fileSha256,
  writeRecording,
} from '../test/fixtures/trb-reference.js';

const why = authorsUnavailable();
if (why) {
  console.error(`cannot record: the authors' scorer cannot run here: ${why}`);
  process.exit(1);
}
const cases = runAuthorsScorer([writeRows(caseRows() as unknown as Record<string, unknown>[])]).map(
  (v) => ({ ...v, file: 'cases' }),
);
const files = SHARED_MODELS.flatMap(experimentFiles);
const rows = runAuthorsScorer(files).map((v) => ({ ...v, file: fileKey(v.file) }));
writeRecording(
  {
    authors_repo: 'https://github.com/prnshv/TeleResilienceBench',
    authors_commit: authorsCommit(),
    regenerate:
      'TELEBENCH_MIRRORS_DIR=<mirrors> node --import tsx/esm scripts/record-trb-verdicts.ts',
    columns: COLUMNS,
    cases_sha256: casesSha256(),
    inputs: Object.fromEntries(files.map((f) => [fileKey(f), fileSha256(f)])),
  },
  [...cases, ...rows],
);
console.log(`${REFERENCE}: ${cases.length} cases + ${rows.length} rows of ${files.length} files`);
