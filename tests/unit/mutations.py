"""One field of a document kbt wrote, changed: the hunt for what a reader of kbt's own documents
(a capture, a probe record, a run record) does with a hand-edited or damaged copy.

    @given(mutation=one_field_changed(document))
    def test_...(mutation): path.write_text(mutation.text) ...
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# What a field may become: every JSON type, a negative, zero, a tiny and a huge number (past a
# double's exact integers, past any count), a short and a long string.
VALUES: tuple[Any, ...] = (
    *(None, True, False, -1, 0, -1.5, 1e-300, 9 * 10**15, 1e308, -1e308, 10**30),
    *("", "x", "x" * 100_000, [], {}, [1, 2]),
)


@dataclass(frozen=True)
class Mutation:
    where: tuple[str | int, ...]
    text: str  # the document, as JSON, with its one change


def field_paths(node: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every field of `node` (the first three items of a list)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*prefix, key)
            yield from field_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:3]):
            yield (*prefix, i)
            yield from field_paths(value, (*prefix, i))


def _changed(document: Any, where: tuple[str | int, ...], value: Any, drop: bool) -> str:
    changed = copy.deepcopy(document)
    parent = changed
    for step in where[:-1]:
        parent = parent[step]
    if drop:
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    return json.dumps(changed)


def field_changed(document: Any) -> st.SearchStrategy[Mutation]:
    """A copy of `document` with one field set to another value or dropped."""
    return st.builds(
        lambda where, value, drop: Mutation(where, _changed(document, where, value, drop)),
        st.sampled_from(sorted(field_paths(document), key=repr)),
        st.sampled_from(VALUES),
        st.booleans(),
    )


def one_field_changed(document: Any) -> st.SearchStrategy[Mutation]:
    """`field_changed`, or the whole text damaged (cut in half, a second copy of a key, NaN, nested
    100,000 deep, binary)."""
    text = json.dumps(document)
    damaged = (
        text[: len(text) // 2],
        "{" + json.dumps(next(iter(document))) + ": null, " + text[1:],  # a key twice: the last one wins
        text.replace(": 1", ": NaN", 1),
        "[" * 100_000 + "]" * 100_000,
        "\x00\x01binary",
    )
    return field_changed(document) | st.sampled_from(damaged).map(lambda t: Mutation((), t))
