"""`-k` applied while the suite makes its tests, not after.

pytest deselects by `-k` only after it has made a test item of every
variant: about 1.3 s for a family of 15,000 (linalg), where a run that names
one failure keeps a few. A variant whose item `-k` would reject is not made
at all. Its item's names are known before it exists, and they are the ones
pytest's KeywordMatcher.from_item reads: the names of the item and of its
parents below the root directory, their extra keywords, the test function's
attributes, and the names of the markers in scope (the function's, its
parents', the parameter's). They are matched by pytest's own parser and
KeywordMatcher, so exactly the variants pytest's `-k` keeps are made
(tests/test_keyword_prefilter.py compares the two), and pytest's `-k` still
runs on them afterwards.

This holds for a test function whose only parameter is the variant, as
suite/test_ops.py's; for any other `keep_by_keyword` returns None (keep all,
pytest's `-k` decides), as it does without `-k`, or when the expression does
not parse (pytest then says so itself), or on a pytest whose internals this
reads are not there.
"""
from __future__ import annotations

from typing import Callable, Iterable

import pytest

try:
    from _pytest.mark import KeywordMatcher, _is_matchable_function_attribute
    from _pytest.mark.expression import Expression
except ImportError:  # another pytest: no prefilter, pytest's -k alone
    Expression = None


def keep_by_keyword(config, definition) -> Callable[[str, Iterable], bool] | None:
    """A test `keep(param_id, marks)` for the items a parametrization of
    definition (a pytest FunctionDefinition) by one parameter would make; None
    where pytest's `-k` must decide alone."""
    text = (config.getoption("keyword") or "").strip()
    if not text or definition is None or Expression is None or any(definition.iter_markers("parametrize")):
        return None
    try:
        expression = Expression.compile(text)
    except SyntaxError:   # pytest's -k says what is wrong with it
        return None
    beside = names_beside_the_item(definition)

    def keep(param_id: str, marks: Iterable) -> bool:
        return expression.evaluate(KeywordMatcher(item_names(definition.name, beside, param_id, marks)))
    return keep


def item_names(function_name: str, beside: Iterable[str], param_id: str, marks: Iterable) -> set[str]:
    """The names `-k` matches for the item of a function with one parameter
    of this id and these marks; beside: names_beside_the_item."""
    return {*beside, f"{function_name}[{param_id}]", *(mark.name for mark in marks)}


def names_beside_the_item(definition) -> set[str]:
    """Every name KeywordMatcher.from_item takes for an item of definition,
    but the item's own name and the marks of its parameter."""
    names = set()
    for node in definition.listchain()[:-1]:   # the item takes the definition's place, under the same parent
        if isinstance(node, pytest.Session):
            continue
        if isinstance(node, pytest.Directory) and isinstance(node.parent, pytest.Session):
            continue
        names.add(node.name)
    names.update(definition.parent.listextrakeywords())   # a new item has none of its own
    names.update(name for name in definition.obj.__dict__ if _is_matchable_function_attribute(name))
    names.update(mark.name for mark in definition.iter_markers())
    return names
