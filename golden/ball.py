"""Midpoint-radius ("ball") arithmetic for the error bounds of chained
computations: a value is a float64 centre, the exact result, and a radius
that bounds how far the device's value can be from it, elementwise.

Every operation carries the radii of its operands through exactly (the
ball of a sum, product or quotient contains every result of operands in
their balls) and adds the device's own rounding of the result: u times the
largest magnitude the result can have, plus eta (half the smallest
subnormal) where a product or quotient can underflow. A sum of n terms adds
the classical g(n-1) sum of magnitudes (harness/compare.py). The radii are
rigorous, if pessimistic where an operand occurs twice.
"""
from __future__ import annotations

from dataclasses import dataclass

from golden.formats import NumberFormat
from golden.lazy_torch import torch


def gamma(n: int, u: float) -> float:
    if n * u >= 0.5:
        raise ValueError(f"a sum of {n} terms has no error bound at u = {u:.3g}")
    return n * u / (1 - n * u)


@dataclass
class Ball:
    c: torch.Tensor       # centre: the exact value
    r: torch.Tensor       # radius: bound on |device - exact|

    @staticmethod
    def exact(c: torch.Tensor) -> "Ball":
        return Ball(c, torch.zeros_like(c))

    @staticmethod
    def cat(parts: list["Ball"]) -> "Ball":
        """The balls flattened and joined into one vector."""
        return Ball(torch.cat([b.c.reshape(-1) for b in parts]), torch.cat([b.r.reshape(-1) for b in parts]))

    @property
    def T(self) -> "Ball":
        return Ball(self.c.T, self.r.T)

    @property
    def mag(self) -> torch.Tensor:
        """The largest magnitude a value in the ball can have."""
        return self.c.abs() + self.r


class Arith:
    """Ball operations rounded in one format."""

    def __init__(self, fmt: NumberFormat):
        self.u = fmt.unit_roundoff
        self.eta = fmt.smallest_subnormal / 2

    def _round(self, c: torch.Tensor, r: torch.Tensor, underflow: bool) -> Ball:
        return Ball(c, r + self.u * (c.abs() + r) + (self.eta if underflow else 0.0))

    def add(self, a: Ball, b: Ball) -> Ball:
        return self._round(a.c + b.c, a.r + b.r, False)

    def sub(self, a: Ball, b: Ball) -> Ball:
        return self._round(a.c - b.c, a.r + b.r, False)

    def mul(self, a: Ball, b: Ball) -> Ball:
        return self._round(a.c * b.c, a.c.abs() * b.r + b.c.abs() * a.r + a.r * b.r, True)

    def div(self, a: Ball, b: Ball) -> Ball:
        """a / b for balls b that exclude 0."""
        low = b.c.abs() - b.r
        if bool((low <= 0).any()):
            raise ValueError("a divisor's error bound reaches 0: no useful bound")
        c = a.c / b.c
        return self._round(c, (a.r * b.c.abs() + a.c.abs() * b.r) / (b.c.abs() * low), True)

    def sqrt(self, a: Ball) -> Ball:
        """sqrt of a ball of positive values: |sqrt(x) - sqrt(c)| <= r / sqrt(c)."""
        if bool((a.c - a.r <= 0).any()):
            raise ValueError("a square root's argument may reach 0: no useful bound")
        c = a.c.sqrt()
        return self._round(c, a.r / c, False)

    def sum(self, a: Ball, dim: int, keepdim: bool = False) -> Ball:
        n = a.c.shape[dim]
        return Ball(a.c.sum(dim, keepdim=keepdim),
                    a.r.sum(dim, keepdim=keepdim) + gamma(max(n - 1, 0), self.u) * a.mag.sum(dim, keepdim=keepdim))

    def linear(self, op, a: Ball, n: int, weights_abs_op=None) -> Ball:
        """A linear map `op` with exact coefficients applied to a ball, as a
        sum of n products per element; `weights_abs_op` is the same map with
        absolute coefficients (defaults to op, for maps with none)."""
        abs_op = weights_abs_op or op
        return Ball(op(a.c), abs_op(a.r) + gamma(n, self.u) * abs_op(a.mag) + n * self.eta)

    def bilinear(self, op, a: Ball, b: Ball, n: int) -> Ball:
        """A bilinear map (sums of n products of an a and a b element)."""
        r = op(a.c.abs(), b.r) + op(a.r, b.c.abs()) + op(a.r, b.r)
        return Ball(op(a.c, b.c), r + gamma(n, self.u) * op(a.mag, b.mag) + n * self.eta)
