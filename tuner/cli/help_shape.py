"""One-line help on the terminal, the details in docs/cli.md.

A command's docstring is a one-line summary, a blank line, then details; a flag's help is one
sentence, optionally followed by more. `kbt ... --help` shows the summary, the exit codes the
details state (after the flags), and each flag's first sentence whole: a clause after ':' or ';'
carries its default or its unit, so a sentence ends only at a full stop. docs/cli.md
(tuner/cli/reference.py) shows everything. Help fits 100 columns: a pipe or a log gets click's
plain layout wrapped there, a terminal rich's layout at its width. Boolean flags show no value
placeholder: `--resume`, not `--resume <bool>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

# typer >= 0.20 vendors its own click, so the click objects are typed loosely and told apart by
# their `param_type_name` rather than by class.

# A sentence ends at '.' followed by a space; abbreviations such as "e.g." do not end one.
_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|vs|etc)\.$")
# A sentence of a docstring that states exit codes: "Exits 1 when ...", "Exit 0 healthy, 10 ...".
_EXITS = re.compile(r"^(exits?|exit status|exit code)\b[^.]*\d", re.IGNORECASE)
# The width help is laid out for in a pipe or a log.
HELP_WIDTH = 100


@dataclass(frozen=True)
class Details:
    """The full texts kept for docs/cli.md."""

    summary: str
    details: str


def first_sentence(text: str, stops: str = ".") -> str:
    """Up to the first of `stops` that is followed by a space and not inside parentheses (a
    command's long summary also stops at ':' or ';': its details keep the rest)."""
    flat = " ".join(text.split())
    depth = 0
    for i, ch in enumerate(flat):
        depth += (ch == "(") - (ch == ")")
        ends = depth == 0 and ch in stops and i + 1 < len(flat) and flat[i + 1] == " "
        if ends and not _ABBREVIATION.search(flat[: i + 1]):
            return flat[: i + (ch == ".")]
    return flat


def sentences(text: str) -> list[str]:
    """`text` cut into sentences (first_sentence, repeatedly)."""
    out: list[str] = []
    rest = " ".join(text.split())
    while rest:
        head = first_sentence(rest)
        out.append(head)
        rest = rest[len(head) :].strip()
    return out


def exit_codes(text: str) -> str:
    """The sentences of a docstring that state its command's exit codes, or ''. A clause after ';'
    counts too ("...; exits 3 when no setting meets the SLO.")."""
    stated = (next((c for c in [s, *s.split("; ")[1:]] if _EXITS.search(c)), "") for s in sentences(text))
    return " ".join(c[0].upper() + c[1:] for c in stated if c)


def split_doc(text: str | None) -> Details:
    """The summary (first paragraph, or its first sentence if that is still long) and the rest."""
    paragraphs = [" ".join(p.split()) for p in (text or "").strip().split("\n\n") if p.strip()]
    if not paragraphs:
        return Details("", "")
    head, rest = paragraphs[0], paragraphs[1:]
    if len(head) > 100:
        short = first_sentence(head, ".;:")
        rest = [head, *rest] if short != head else rest
        head = short
    return Details(head, "\n\n".join(rest))


def shape(cmd: Any) -> Any:
    """Rewrite a command tree in place for the terminal; the full texts stay on `kbt_details`."""
    if getattr(cmd, "kbt_details", None) is None:
        d = split_doc(cmd.help)
        cmd.kbt_details = d
        cmd.help = d.summary
        cmd.short_help = d.summary
        exits = exit_codes(f"{d.summary} {d.details}")
        if exits and exits not in d.summary:
            cmd.epilog = f"{exits} {cmd.epilog or ''}".strip()
        for param in cmd.params:
            if getattr(param, "param_type_name", "") == "option":
                full = param.help or ""
                param.kbt_help = " ".join(full.split())
                param.help = first_sentence(full)
                _no_placeholder(param)
        _shape_help_option(cmd)
    for sub in getattr(cmd, "commands", {}).values():
        shape(sub)
    return cmd


def _no_placeholder(param: Any) -> None:
    if param.is_flag and not param.count:  # typer shows `--resume <bool>` otherwise
        param.display_type_rich = lambda ctx: None


def _shape_help_option(cmd: Any) -> None:
    original = cmd.get_help_option

    def get_help_option(ctx: Any) -> Any | None:
        option = original(ctx)
        if option is not None:
            _no_placeholder(option)
        return option

    cmd.get_help_option = get_help_option


# Kept on one line when help is wrapped: a bracket click adds ("[default: 5m]", "[required]") and
# a number with its unit ("30 s", "0.7 default" is two words, "100 ms" one).
_GLUED = re.compile(r"\[[^\]\n]{1,60}\]|\d (?:ms|s|min|h|MB|MiB|KB|KiB|GB|B|%|msgs/s|req/s)\b")
_NBSP = "\u00a0"


@cache  # once per process
def _install_wrapper() -> None:
    """click's TextWrapper made one that never cuts a word, a URL or a hyphenated name, nor the
    pieces above."""
    import typer._click._textwrap as textwrap_module

    class Wrapper(textwrap_module.TextWrapper):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.break_long_words = False
            self.break_on_hyphens = False

        def wrap(self, text: str) -> list[str]:
            glued = _GLUED.sub(lambda m: m.group(0).replace(" ", _NBSP), text)
            return [line.replace(_NBSP, " ") for line in super().wrap(glued)]

    textwrap_module.TextWrapper = Wrapper  # type: ignore[misc]  # click reads it per call


def plain_help(cmd: Any) -> Any:
    """Help for a pipe or a log: click's plain layout (no boxes) at HELP_WIDTH columns, wrapped
    between words (a flag's help continues under itself)."""
    _install_wrapper()
    if hasattr(cmd, "rich_markup_mode"):
        cmd.rich_markup_mode = None
    width = {"max_content_width": HELP_WIDTH, "terminal_width": HELP_WIDTH}
    cmd.context_settings = {**(cmd.context_settings or {}), **width}
    for sub in getattr(cmd, "commands", {}).values():
        plain_help(sub)
    return cmd


def full_help(param: Any) -> str:
    return getattr(param, "kbt_help", None) or getattr(param, "help", None) or ""


def details(cmd: Any) -> Details:
    return getattr(cmd, "kbt_details", None) or split_doc(cmd.help)
