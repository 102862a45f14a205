"""Team orders (PTL_TEAM_ORDER): how a forked team's cores run, as the user
spells them. What each sequenced order means is ptl_team_order.h's
(harness/runtime/include), which both teams that run one core at a time use:
the host's pthreads (it reads the word from its environment) and the QEMU
harts (compiled in: defines()).

"free" is the target's own scheduling: the host's threads all at once, the
QEMU machine's round robin of harts.
"""
from __future__ import annotations

from harness.option_values import OptionValueError, label

TEAM_ORDERS = ("free", "forward", "reverse", "rotate")
ALLOWED = f"one of {', '.join(TEAM_ORDERS)} or random:SEED (SEED a decimal number)"


def is_team_order(order: str) -> bool:
    """One of TEAM_ORDERS, or random:SEED with a decimal SEED."""
    return order in TEAM_ORDERS or (order.startswith("random:") and order[7:].isdigit() and order[7:].isascii())


def problem(order: str) -> str | None:
    """What is wrong with `order` as a team order, or None."""
    return None if is_team_order(order) else f"{order!r} is not a team order; use {ALLOWED}"


def parse(name: str, text: str) -> str:
    """A team order (is_team_order), else OptionValueError."""
    if not is_team_order(text):
        raise OptionValueError(f"{label(name, text)}: must be a team order: {ALLOWED}")
    return text


def defines(order: str) -> list[str]:
    """The C defines that compile `order` into a team (ptl_team_order.h's
    enum): none for "free"."""
    if order == "free":
        return []
    kind, _, seed = order.partition(":")
    return [f"-DPTL_TEAM_ORDER=PTL_ORDER_{kind.upper()}", *([f"-DPTL_TEAM_SEED={int(seed)}ull"] if seed else [])]


def timing_refusal(order: str) -> str | None:
    """Why what times the target (the performance gate and its baseline,
    the autotuner) refuses a run in `order`, or None for "free"."""
    if order == "free":
        return None
    return (f"PTL_TEAM_ORDER={order} runs the team one core at a time, whose waits count otherwise than the "
            f"target's own scheduling; unset PTL_TEAM_ORDER")
