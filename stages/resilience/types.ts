/**
 * Record shapes shared by the TeleResilienceBench construction stages.
 */

/** One normalised benchmark row, whatever its source (issue 6, "one item shape"). */
export interface ResilienceItem {
  /** `ot-lite:<subset>:<row>` for ot-lite, `<source>:<subset>:<row>` otherwise; row 0-based. */
  sample_id: string;
  source: string;
  subset: string;
  /** Value of the published `sub_benchmark` field. */
  sub_benchmark: string;
  role: 'main' | 'auxiliary' | 'extra';
  /** 0-based row of the split. */
  row: number;
  kind: 'mc' | 'numeric';
  question: string;
  /** Option texts in order ([] for numeric items). Texts can repeat. */
  choices: string[];
  /** 0-based gold option (mc), else null. */
  gold_index: number | null;
  /** Numeric gold (numeric), else null. */
  gold_value: number | null;
  /** Gold as text: the option text, or the number as the authors printed it (Python repr). */
  correct_answer: string;
  difficulty: string | null;
}

/** An item with its generator prompt rendered (output of the load stages). */
export interface PromptedItem extends ResilienceItem {
  prompt: string;
  /** Template name and version that made `prompt`. */
  prompt_template: string;
  prompt_version: string;
  /** cl100k_base tokens of `prompt` (the local count before sending). */
  prompt_tokens_cl100k: number;
}

/** A row that cannot be used; reported with its file and row, never guessed. */
export interface RejectedRow {
  /** File as given in the registry (local path, or `hub:<dataset>@<revision>/<file>`). */
  file: string;
  /** 0-based row of the split (null when the row could not be read at all). */
  row: number | null;
  /** 1-based line in the file when known (JSON Lines, CSV). */
  line: number | null;
  /** `no_options`, `empty_question`, `gold_out_of_range`, `bad_gold`, `unparseable_row`, ... */
  reason: string;
  detail: string;
}

/** Output of one load work item (one subset). */
export interface SubsetLoadOutput {
  subset_id: string;
  source: string;
  subset: string;
  sub_benchmark: string;
  role: 'main' | 'auxiliary' | 'extra';
  file: string;
  file_sha256: string;
  rows_read: number;
  items: PromptedItem[];
  rejected: RejectedRow[];
  /** Commit the Hub resolved the pinned revision to (Hub subsets only). */
  hub_commit?: string | null;
  /**
   * Where a local subset downloaded into `<state>/data` came from (stages/resilience/sources.ts):
   * its URL and the server's ETag (the bytes' hash is `file_sha256`). Absent for files of a
   * configured data root.
   */
  download?: { url: string; etag: string | null };
}
