"""The TeleResilienceBench scorer: CFR / NFR / WFR per sample and as metrics, TeleMath CR.

Paper (arXiv:2605.09929, section IV-A): the target continues the generator's wrong half trace;
its answer is a *correct flip* (the gold answer), a *no flip* (the generator's same wrong answer)
or a *wrong flip* (another wrong answer). CFR, NFR and WFR are their shares of the scored rows;
a reply with no answer is a parse failure and stays in the denominator; TeleMath's CR is the CFR
of the numeric (auxiliary) items, numbers matching within relative 1e-3 or absolute 1e-5.

The answer is read as telebench's ``strict`` mode reads it (stages/resilience-eval/parse-modes.ts):
the last non-empty line of the visible reply is exactly ``Final Answer: <n>`` with n in 1..N
(numeric items: ``Final Answer: <number>``, commas and U+2212 read). ``telebench score`` on this
task's log adds the ``lenient`` and ``published`` modes. As telebench's ``default`` profile does,
a reply stopped by the output budget is ``excluded`` (counted, not in the denominators). NFR and
WFR are unavailable (NaN) when the generator's answer is unknown for a wrongly answered row.
"""

from __future__ import annotations

import math
import re
from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState

NUMBER = r"[-+−]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+−]?\d+)?"
MC_LINE = re.compile(r"^Final Answer:\s*(\d+)$")
NUM_LINE = re.compile(rf"^Final Answer:\s*({NUMBER})$")


def _non_empty_lines(text: str) -> list[str]:
    return [ln.strip() for ln in re.split(r"\r\n|\r|\n", text) if ln.strip() != ""]


def _to_number(text: str) -> float | None:
    try:
        v = float(text.replace(",", "").replace("−", "-"))
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_strict(content: str, kind: str, num_options: int) -> int | float | None:
    """The strict answer of a visible reply: a 0-based option index (mc), a number, or None."""
    lines = _non_empty_lines(content)
    if not lines:
        return None
    if kind == "mc":
        m = MC_LINE.match(lines[-1])
        k = int(m.group(1)) if m else 0
        return k - 1 if 1 <= k <= num_options else None
    m = NUM_LINE.match(lines[-1])
    return _to_number(m.group(1)) if m else None


def numbers_match(a: float, b: float, rel: float = 1e-3, abs_: float = 1e-5) -> bool:
    """TeleMath's tolerance (telebench stages/resilience/numbers.ts)."""
    if a == b:
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def classify(answer: int | float | None, f: dict[str, Any], excluded: bool) -> str:
    """correct_flip, no_flip, wrong_flip, incorrect (generator answer unknown), parse_failure, excluded."""
    if excluded:
        return "excluded"
    if answer is None:
        return "parse_failure"
    if f["kind"] == "mc":
        if answer == f["gold_index"]:
            return "correct_flip"
        if f["generator_index"] is None:
            return "incorrect"
        return "no_flip" if answer == f["generator_index"] else "wrong_flip"
    if numbers_match(float(answer), float(f["gold_value"])):
        return "correct_flip"
    if f["generator_value"] is None:
        return "incorrect"
    return "no_flip" if numbers_match(float(answer), float(f["generator_value"])) else "wrong_flip"


def _rate(scores: list[SampleScore], kind: str, outcome: str) -> float:
    """Percent of the scored (not excluded) rows of ``kind`` whose outcome is ``outcome``."""
    rows = [
        s.score.metadata or {}
        for s in scores
        if (s.score.metadata or {}).get("kind") == kind and (s.score.metadata or {}).get("outcome") != "excluded"
    ]
    if not rows:
        return math.nan
    if outcome != "correct_flip" and any(r["outcome"] == "incorrect" for r in rows):
        return math.nan
    return 100.0 * sum(r["outcome"] == outcome for r in rows) / len(rows)


@metric(name="CFR")
def cfr() -> Metric:
    """Correct Flip Rate, percent of the scored multiple-choice rows (NaN when none)."""

    def compute(scores: list[SampleScore]) -> float:
        return _rate(scores, "mc", "correct_flip")

    return compute


@metric(name="NFR")
def nfr() -> Metric:
    """No Flip Rate, percent (NaN when none, or a wrong row's generator answer is unknown)."""

    def compute(scores: list[SampleScore]) -> float:
        return _rate(scores, "mc", "no_flip")

    return compute


@metric(name="WFR")
def wfr() -> Metric:
    """Wrong Flip Rate, percent (NaN as NFR)."""

    def compute(scores: list[SampleScore]) -> float:
        return _rate(scores, "mc", "wrong_flip")

    return compute


@metric(name="TeleMath_CR")
def telemath_cr() -> Metric:
    """TeleMath correction rate: CFR of the numeric rows, percent (NaN when none)."""

    def compute(scores: list[SampleScore]) -> float:
        return _rate(scores, "numeric", "correct_flip")

    return compute


@metric(name="parse_failure_rate")
def parse_failure_rate() -> Metric:
    """Share of scored rows (all kinds) whose reply gave no strict answer, percent."""

    def compute(scores: list[SampleScore]) -> float:
        rows = [(s.score.metadata or {}).get("outcome") for s in scores]
        scored = [o for o in rows if o != "excluded"]
        return 100.0 * scored.count("parse_failure") / len(scored) if scored else math.nan

    return compute


@scorer(metrics=[cfr(), nfr(), wfr(), telemath_cr(), parse_failure_rate()])
def resilience_scorer() -> Scorer:
    """Per sample: ``value`` {CFR, NFR, WFR} as 0/1 (all 0 for a parse failure or an excluded
    row), ``answer`` the 1-based option or the number read, ``explanation`` the outcome;
    ``metadata`` outcome, kind, subset, sample_id, stop_reason."""

    async def score(state: TaskState, target: Target) -> Score:
        f = state.metadata
        content = state.output.completion if state.output else ""
        answer = parse_strict(content, f["kind"], len(f["choices"]))
        excluded = state.output is not None and state.output.stop_reason == "max_tokens"
        outcome = classify(answer, f, excluded)
        shown = None if answer is None else (str(answer + 1) if f["kind"] == "mc" else repr(answer))
        return Score(
            value={
                "CFR": int(outcome == "correct_flip"),
                "NFR": int(outcome == "no_flip"),
                "WFR": int(outcome == "wrong_flip"),
            },
            answer=shown,
            explanation=outcome,
            metadata={
                "outcome": outcome,
                "kind": f["kind"],
                "subset": f["subset"],
                "sample_id": f["sample_id"],
                "stop_reason": state.output.stop_reason if state.output else None,
            },
        )

    return score
