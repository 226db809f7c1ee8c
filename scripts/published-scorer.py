#!/usr/bin/env python3
"""Runs the TeleResilienceBench authors' scorer (their `src/parsing.py`) on experiment rows.

Usage: TELERESILIENCEBENCH_SRC=<checkout of prnshv/TeleResilienceBench> \
       python3 scripts/published-scorer.py FILE.jsonl [FILE.jsonl ...] > verdicts.jsonl

For every row of every file (published experiment format: `continuation_raw`, `task_kind`,
`sub_benchmark`) it prints one JSON line `{file, line, sample_id, pred_index, pred_float}`: what
their `parse_mc_output(raw, choices)` / `extract_float_answer(raw)` return on the row's
`continuation_raw`, exactly as their `scripts/02_eval_continuation.py` calls them.
Option texts: TeleLogs' C1..C8 (their gsma_loader builds them); other subsets' texts are not in
the experiment files, so `choices` is N empty strings (N from OPTION_COUNTS or the row's
`num_options` when present), which their label rule skips. Needs `tiktoken` (their module imports
it). Used by test/stages/resilience-eval/published-scorer.test.ts, scripts/record-trb-verdicts.ts
and docs/resilience-scoring.md.
"""
import json
import os
import sys

src = os.environ.get("TELERESILIENCEBENCH_SRC")
if not src:
    sys.exit("set TELERESILIENCEBENCH_SRC to a checkout of github.com/prnshv/TeleResilienceBench")
sys.path.insert(0, src)
from src.parsing import extract_float_answer, parse_mc_output  # noqa: E402

OPTION_COUNTS = {"teleqna": 5, "teletables": 5, "telelogs": 8, "3gpp_tsg": 16,
                 "oranbench": 4, "srsranbench": 4, "sixg_bench": 4}
KNOWN = {"telelogs": [f"C{i}" for i in range(1, 9)]}


def main() -> None:
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8-sig") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                r = json.loads(line)
                raw = r.get("continuation_raw") or ""
                sid = r["sample_id"]
                subset = sid.split(":")[1].lower() if ":" in sid else r.get("sub_benchmark", "")
                out = {"file": path, "line": n, "sample_id": sid, "pred_index": None, "pred_float": None}
                if r.get("task_kind") == "telemath":
                    v = extract_float_answer(raw)
                    out["pred_float"] = None if v is None else repr(v)
                else:
                    choices = r.get("choices") or KNOWN.get(subset) or [""] * int(
                        r.get("num_options") or OPTION_COUNTS[subset])
                    out["pred_index"] = parse_mc_output(raw, list(choices))
                print(json.dumps(out))


main()
