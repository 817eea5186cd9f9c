"""One-line help on the terminal, the details in docs/cli.md.

A command's docstring is a one-line summary, a blank line, then details; a flag's help is one
sentence, optionally followed by more. `kbt ... --help` shows the summary and each flag's first
sentence; docs/cli.md (tuner/cli/reference.py) shows everything. Boolean flags show no value
placeholder: `--resume`, not `--resume <bool>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# typer >= 0.20 vendors its own click, so the click objects are typed loosely and told apart by
# their `param_type_name` rather than by class.

# A sentence ends at '.', ';' or ':' followed by a space; abbreviations such as "e.g." do not end one.
_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|vs|etc)\.$")


@dataclass(frozen=True)
class Details:
    """The full texts kept for docs/cli.md."""

    summary: str
    details: str


def first_sentence(text: str) -> str:
    """Up to the first '.', ';' or ':' that is followed by a space and not inside parentheses."""
    flat = " ".join(text.split())
    depth = 0
    for i, ch in enumerate(flat):
        depth += (ch == "(") - (ch == ")")
        ends = depth == 0 and ch in ".;:" and i + 1 < len(flat) and flat[i + 1] == " "
        if ends and not _ABBREVIATION.search(flat[: i + 1]):
            return flat[:i] + ("." if ch == "." else "")
    return flat


def split_doc(text: str | None) -> Details:
    """The summary (first paragraph, or its first sentence if that is still long) and the rest."""
    paragraphs = [" ".join(p.split()) for p in (text or "").strip().split("\n\n") if p.strip()]
    if not paragraphs:
        return Details("", "")
    head, rest = paragraphs[0], paragraphs[1:]
    if len(head) > 100:
        short = first_sentence(head)
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
        for param in cmd.params:
            if getattr(param, "param_type_name", "") == "option":
                full = param.help or ""
                param.kbt_help = " ".join(full.split())
                param.help = first_sentence(full) if len(full) > 80 else param.kbt_help
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


def plain_help(cmd: Any) -> Any:
    """Help for a pipe or a log: click's plain layout (no boxes), each flag on one line (the
    summaries are short already; nothing is wrapped mid-phrase)."""
    if hasattr(cmd, "rich_markup_mode"):
        cmd.rich_markup_mode = None
    cmd.context_settings = {**(cmd.context_settings or {}), "max_content_width": 400, "terminal_width": 400}
    for sub in getattr(cmd, "commands", {}).values():
        plain_help(sub)
    return cmd


def full_help(param: Any) -> str:
    return getattr(param, "kbt_help", None) or getattr(param, "help", None) or ""


def details(cmd: Any) -> Details:
    return getattr(cmd, "kbt_details", None) or split_doc(cmd.help)
