"""TeleResilienceBench as an Inspect AI task.

    inspect eval inspect/teleresiliencebench/teleresiliencebench.py \\
        -T data=<release folder | instances .jsonl/.json/.csv> --model <provider/model>

Each released instance is one sample: the paper's continuation prompt (Appendix A; the template
files telebench itself uses) with the question, the options and the generator's flawed
``half_reasoning_trace``; the target model continues it (one ``generate``); the scorer
(trb_scorer.py) gives CFR / NFR / WFR per sample and as metrics, and TeleMath's CR. Logs open in
``inspect view``; ``telebench score <log.eval> --instances <same data>`` scores the stored
replies in telebench's three parse modes without calling a model.
"""

from __future__ import annotations


from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from trb_dataset import resolve_user_path, trb_dataset
from trb_prompt import DEFAULT_PROMPTS_DIR
from trb_scorer import resilience_scorer


@task
def teleresiliencebench(
    data: str,
    max_tokens: int = 4096,
    temperature: float = 0.0,
    half_trace: str = "prompt",
    prompts_dir: str | None = None,
) -> Task:
    """TeleResilienceBench.

    Args:
        data: a release folder (its ``data/**/*.jsonl``) or an instances file (telebench's schema
            or the published one: JSON Lines, JSON, or CSV such as the Hub's
            ``TeleResilienceBench.csv``); a relative path is read against the folder
            ``inspect eval`` ran from (``$PWD``, then the current folder).
        max_tokens: output budget (telebench's ``num_predict``, default 4096); a reply it stops
            is excluded, as in telebench's ``default`` profile.
        temperature: sampling temperature (0 as in the paper).
        half_trace: ``prompt`` (the paper's and telebench's form) or ``prefill`` (also the
            assistant's turn, for providers that continue it).
        prompts_dir: another folder of continuation templates (default: this checkout's
            ``config/prompts/resilience``).
    """
    # relative paths are the user's folder's, not the task file's (Inspect changes into it)
    prompts = resolve_user_path(prompts_dir, "prompts_dir") if prompts_dir else DEFAULT_PROMPTS_DIR
    return Task(
        dataset=trb_dataset(resolve_user_path(data, "data"), prompts, half_trace),
        solver=generate(),
        scorer=resilience_scorer(),
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens),
        name="teleresiliencebench",
    )
