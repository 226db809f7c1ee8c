"""TeleResilienceBench instances as Inspect samples.

Reads a released snapshot (a release folder: every ``data/**/*.jsonl``; or one JSON Lines, JSON
or CSV file) in telebench's instance schema (``correct_index``/``incorrect_index`` 0-based,
``correct_value``/``incorrect_value``, ``kind``, ``subset``) or the published one (``sample_id,
sub_benchmark, question, choices, correct_answer, incorrect_answer, half_reasoning_trace``:
gold and the generator's answer as option texts or numbers; a CSV ``choices`` cell is a JSON
array or a Python list literal, as pandas writes it). Each instance becomes one sample whose input
is the paper's continuation prompt (trb_prompt.py) and whose metadata carries what the scorer
needs. A row that fits neither schema raises ``ValueError`` naming the file and line.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Iterable

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

from trb_prompt import continuation_prompt


def _rows_of_file(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix == ".csv":
        # a quoted cell may hold line breaks (half traces do): the csv module reads the records
        for k, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), start=1):
            yield f"{path} record {k}", dict(row)
    elif path.suffix == ".json":
        rows = json.loads(text)
        for k, row in enumerate(rows if isinstance(rows, list) else [rows], start=1):
            yield f"{path} row {k}", row
    else:
        for k, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield f"{path}:{k}", json.loads(line)


def resolve_user_path(value: str | Path, what: str) -> Path:
    """A path given on the command line (``-T data=...``), relative ones read where the user ran.

    Inspect changes into the task file's folder while it builds the task, so a relative path
    would resolve against ``inspect/teleresiliencebench/``. It is tried against ``$PWD`` (the
    shell's folder, which ``os.chdir`` leaves alone) and then the current folder; an absolute
    path is returned as is.

    Raises ValueError naming ``what``, the value and every path tried when none exists.
    """
    p = Path(value).expanduser()
    if p.is_absolute():
        return p
    tried: list[Path] = []
    for base in (os.environ.get("PWD"), os.getcwd()):
        if base and (Path(base) / p) not in tried:
            tried.append(Path(base) / p)
            if tried[-1].exists():
                return tried[-1]
    raise ValueError(
        f"{what} {str(value)!r}: no such file or folder (tried {' and '.join(map(str, tried))}; "
        "a relative path is read against the folder inspect eval was run from)"
    )


def read_rows(source: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """The rows of a release folder (``data/**/*.jsonl``, sorted) or of one file, with places."""
    p = Path(source)
    if p.is_dir():
        files = sorted(p.glob("data/**/*.jsonl")) or sorted(p.glob("*.jsonl"))
        if not files:
            raise ValueError(f"{p}: no data/**/*.jsonl (is it a TeleResilienceBench release folder?)")
    elif p.is_file():
        files = [p]
    else:
        raise ValueError(f"{p}: no such file or folder")
    return [r for f in files for r in _rows_of_file(f)]


def _choices(cell: Any, where: str) -> list[str]:
    if cell is None or cell == "":
        return []
    if isinstance(cell, list):
        return [str(c) for c in cell]
    try:
        value = json.loads(cell)
    except json.JSONDecodeError:
        value = ast.literal_eval(cell)
    if not isinstance(value, list):
        raise ValueError(f"{where}: choices is not a list")
    return [str(c) for c in value]


def _number(text: Any) -> float | None:
    try:
        return float(str(text).strip())
    except ValueError:
        return None


def _index_of(choices: list[str], text: Any) -> int | None:
    norm = str(text).strip().lower()
    hits = [i for i, c in enumerate(choices) if c.strip().lower() == norm]
    return hits[0] if hits else None


def instance_fields(row: dict[str, Any], where: str) -> dict[str, Any]:
    """One row (either schema) as the fields a sample needs.

    Raises ValueError naming ``where`` when the row has no half trace, no question, or a gold
    answer that is not one of its options (or not a number).
    """
    for key in ("sample_id", "question", "half_reasoning_trace"):
        if not row.get(key):
            raise ValueError(f"{where}: not a TeleResilienceBench instance: {key} missing")
    choices = _choices(row.get("choices"), where)
    kind = row.get("kind") or ("mc" if choices else "numeric")
    own = "correct_index" in row or "correct_value" in row
    if own:
        gold_i, gen_i = row.get("correct_index"), row.get("incorrect_index")
        gold_v, gen_v = row.get("correct_value"), row.get("incorrect_value")
    elif kind == "mc":
        gold_i, gen_i = _index_of(choices, row.get("correct_answer")), _index_of(choices, row.get("incorrect_answer"))
        gold_v = gen_v = None
    else:
        gold_i = gen_i = None
        gold_v, gen_v = _number(row.get("correct_answer")), _number(row.get("incorrect_answer"))
    if (gold_i if kind == "mc" else gold_v) is None:
        raise ValueError(f"{where}: {row['sample_id']}: no usable gold answer ({row.get('correct_answer')!r})")
    sample_id = str(row["sample_id"])
    subset = row.get("subset") or (sample_id.split(":")[1] if ":" in sample_id else row.get("sub_benchmark", ""))
    return {
        "sample_id": sample_id,
        "sub_benchmark": row.get("sub_benchmark", subset),
        "subset": str(subset).lower(),
        "kind": kind,
        "question": row["question"],
        "choices": choices,
        "half_reasoning_trace": row["half_reasoning_trace"],
        "gold_index": gold_i,
        "gold_value": gold_v,
        "generator_index": gen_i,
        "generator_value": gen_v,
        "difficulty": row.get("difficulty"),
    }


def trb_dataset(source: str | Path, prompts_dir: Path, half_trace: str = "prompt") -> MemoryDataset:
    """The samples of ``source``.

    ``half_trace``: ``prompt`` (telebench's and the paper's Appendix A: the half trace inside the
    continuation prompt, one user message) or ``prefill`` (the same prompt, then the half trace
    again as the assistant's turn for the model to continue).
    """
    if half_trace not in ("prompt", "prefill"):
        raise ValueError(f"half_trace: expected prompt or prefill, got {half_trace!r}")
    samples = []
    for where, row in read_rows(source):
        f = instance_fields(row, where)
        messages: list[Any] = [ChatMessageUser(content=continuation_prompt(f, prompts_dir))]
        if half_trace == "prefill":
            messages.append(ChatMessageAssistant(content=f["half_reasoning_trace"]))
        gold = str(f["gold_index"] + 1) if f["kind"] == "mc" else repr(f["gold_value"])
        samples.append(Sample(id=f["sample_id"], input=messages, target=gold, metadata=f))
    if not samples:
        raise ValueError(f"{source}: no instances")
    return MemoryDataset(samples, name="teleresiliencebench", location=str(source))
