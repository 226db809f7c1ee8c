"""The continuation prompt, from the same template files telebench uses.

``config/prompts/resilience/continuation-mc.v1.txt`` (the paper's Appendix A, verbatim) and
``continuation-numeric.v1.txt``, filled as ``stages/resilience/prompts.ts`` fills them: every
``{PLACEHOLDER}`` replaced in one pass (a value's own braces are never substituted again), options
one per line as ``1. text`` unless every option is already numbered that way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: The templates of the checkout this task ships in.
DEFAULT_PROMPTS_DIR = Path(__file__).resolve().parents[2] / "config" / "prompts" / "resilience"


def render_options(choices: list[str]) -> str:
    """Options one per line, ``1. text`` (kept as they are when already numbered so)."""
    numbered = bool(choices) and all(c.startswith(f"{i + 1}. ") for i, c in enumerate(choices))
    return "\n".join(c if numbered else f"{i + 1}. {c}" for i, c in enumerate(choices))


def render_template(text: str, values: dict[str, str]) -> str:
    """Fills ``{WORD}`` placeholders in one pass; a missing one raises ValueError."""

    def fill(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise ValueError(f"the template needs {{{m.group(1)}}}, which the instance does not give")
        return values[m.group(1)]

    return re.sub(r"\{([A-Z_]+)\}", fill, text)


def continuation_prompt(f: dict[str, Any], prompts_dir: Path = DEFAULT_PROMPTS_DIR) -> str:
    """The prompt of one instance (fields of trb_dataset.instance_fields)."""
    name = "continuation-mc.v1.txt" if f["kind"] == "mc" else "continuation-numeric.v1.txt"
    # one final line break dropped, as prompts.ts loads a template
    text = re.sub(r"\r?\n\Z", "", (Path(prompts_dir) / name).read_text(encoding="utf-8"), count=1)
    return render_template(
        text,
        {
            "QUESTION": f["question"],
            "OPTIONS": render_options(f["choices"]),
            "NUM_OPTIONS": str(len(f["choices"])),
            "HALF_TRACE": f["half_reasoning_trace"],
        },
    )
