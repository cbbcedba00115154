"""Hypothesis strategies that break valid JSON documents the way a hand edit, a bad writer or a fuzzer would.

`mutated(doc)` draws a copy of a decoded JSON document with a few structured changes: a value swapped for one
of another JSON type, a huge, negative or non-finite number, a deeply nested list, a long string, a sibling
value from elsewhere in the document, a key dropped or an unknown one added. `vocabulary` words (event types,
places, player ids, ...) can stand in for any string, so many mutants still parse and reach the engines.
`as_bytes(text)` then draws byte-level damage: a cut-off file, a byte that is not UTF-8, a line dropped,
doubled or swapped.

Test modules in tests/rules import it as `from json_mutations import ...` (pytest puts the test folder on
sys.path), as they do engine_streams.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from typing import Any, Sequence

from hypothesis import strategies as st

# Values a field may be replaced with: every JSON type, and numbers at the edges of what Python's json reads
# (Infinity and NaN literals, a float literal past the float range, integers past a float's and past 4300 digits).
ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 2, 3, 7, 9, 10, 99, -1.5, 0.5, 1e-300, 1e308, -1e308, 2**63, -(2**63), 10**400,
    float("inf"), float("-inf"), float("nan"), "", "x", "é" * 3, "\u2028", "\x00", "a" * 5000, [], {}, [1, 2],
    {"a": 1}, [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]],
)
# Raw JSON text dropped in place of a value: what json.dumps never writes but a file can hold.
ODD_TEXTS: tuple[str, ...] = (
    "[" * 150 + "]" * 150, "[" * 100_000, "1" * 5000, "-" + "9" * 4301, "1" * 400 + ".5", "1e99999", "-Infinity",
    "NaN", '{"a":' * 120 + "1" + "}" * 120,
)
RAW = "\x00raw:"  # marks a string to be written as raw JSON text by `dumps`


def _paths(doc: Any, limit: int = 4000) -> list[tuple[Any, ...]]:
    """Every place in the document (the root is ()), breadth first, at most `limit` of them."""
    out: list[tuple[Any, ...]] = [()]
    queue: deque[tuple[tuple[Any, ...], Any]] = deque([((), doc)])
    while queue and len(out) < limit:
        path, node = queue.popleft()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            out.append(path + (key,))
            queue.append((path + (key,), child))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


ACTIONS = ("odd", "odd", "word", "number", "sibling", "drop", "unknown", "raw", "wrap")
# Changes that keep the document well-formed JSON of plausible types, so more mutants reach the code behind
# the parser (the rules engines): a word for a word, a small number for a number, a part moved or dropped.
PLAUSIBLE = ("word", "word", "number", "number", "sibling", "drop", "unknown")
# Keys an "unknown" mutation adds: junk, and the fields of other events and places (a grouped ball's position)
KEYS = ("extra", "", "type", "t", "id", "__proto__", "é", "position", "slot", "row", "col", "player", "owner",
        "target", "confidence", "source", "ball_from", "players")


@st.composite
def mutated(draw: Any, doc: Any, vocabulary: Sequence[str] = (), most: int = 3, plausible: bool = False) -> Any:
    """A copy of `doc` with 1..`most` structured mutations; only PLAUSIBLE ones if asked."""
    doc = copy.deepcopy(doc)
    actions = PLAUSIBLE if plausible else ACTIONS
    for _ in range(draw(st.integers(1, most))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        node = _get(doc, path)
        action = draw(st.sampled_from(tuple(actions)))
        if action == "odd":  # a copy: a later mutation may change it in place
            doc = _set(doc, path, copy.deepcopy(draw(st.sampled_from(ODD_VALUES))))
        elif action == "word" and vocabulary and (isinstance(node, str) or not plausible):
            doc = _set(doc, path, draw(st.sampled_from(list(vocabulary))))
        elif action == "number" and plausible:
            if isinstance(node, (int, float)) and not isinstance(node, bool):
                doc = _set(doc, path, draw(st.one_of(st.integers(-2, 12), st.floats(0, 2000))))
        elif action == "number":
            number = draw(st.one_of(st.integers(-3, 12), st.integers(), st.floats(allow_nan=True, allow_infinity=True)))
            doc = _set(doc, path, number)
        elif action == "sibling":
            doc = _set(doc, path, copy.deepcopy(_get(doc, draw(st.sampled_from(paths)))))
        elif action == "drop" and path:
            parent = _get(doc, path[:-1])
            del parent[path[-1]]
        elif action == "unknown" and isinstance(node, dict):
            values = st.integers(-1, 10) | st.sampled_from(list(vocabulary) or [""]) if plausible else \
                st.sampled_from(ODD_VALUES)
            node[draw(st.sampled_from(KEYS))] = copy.deepcopy(draw(values))
        elif action == "raw":
            doc = _set(doc, path, RAW + draw(st.sampled_from(ODD_TEXTS)))
        elif action == "wrap":
            doc = _set(doc, path, draw(st.sampled_from(([node], {"value": node}))))
    return doc


def dumps(doc: Any) -> str:
    """JSON text as Python's json writes it (Infinity, NaN allowed), with RAW strings spliced in as raw text."""
    raws: list[str] = []

    def swap(node: Any) -> Any:
        if isinstance(node, str) and node.startswith(RAW):
            raws.append(node[len(RAW):])
            return f"\x00{len(raws) - 1}\x00"
        if isinstance(node, list):
            return [swap(item) for item in node]
        if isinstance(node, dict):
            return {key: swap(value) for key, value in node.items()}
        return node

    text = json.dumps(swap(doc), ensure_ascii=False)
    for index, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00{index}\x00"), raw)
    return text


def json_lines(rows: Any) -> str:
    """One line per item of `rows`; a mutant that is no longer a list is one line."""
    return "".join(dumps(row) + "\n" for row in (rows if isinstance(rows, list) else [rows]))


@st.composite
def as_bytes(draw: Any, text: str) -> bytes:
    """The text as UTF-8 bytes, now and then damaged: cut short, a bad byte put in, lines dropped or repeated."""
    data = text.encode("utf-8")
    action = draw(st.sampled_from(("none", "none", "none", "cut", "byte", "lines")))
    if action == "cut" and data:
        return data[:draw(st.integers(0, len(data) - 1))]
    if action == "byte":
        at = draw(st.integers(0, len(data)))
        bad = draw(st.sampled_from((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\n", b"\r", b"\xef\xbb\xbf", b"{")))
        return data[:at] + bad + data[at:]
    if action == "lines":
        lines = data.split(b"\n")
        i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(("drop", "double", "swap")))
        if how == "drop":
            del lines[i]
        elif how == "double":
            lines.insert(i, lines[j])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    return data
