"""Comparison of a device output tensor against its reference.

Error model
-----------
Every element of the outputs tested here is a sum of n rounded operations
(products, additions, a bias) carried out in the device's format with unit
roundoff u (2^-24 fp32, 2^-11 fp16, 2^-8 bf16). Whatever order the kernel
sums in, and with or without fused multiply-add, the classical bound for
such a sum (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1)
gives

    |device - exact| <= gamma(n) * sum |term|  +  n * eta,
    gamma(n) = n*u / (1 - n*u),

where sum |term| is the magnitude that the golden stage computes for each
element, and eta (half the smallest subnormal) covers underflow. The exact
value is the float64 result on the same rounded inputs. The bound is
rigorous, so a clean library never exceeds it; it is not loosened per test.
A copy (n = 0) must be bit exact. Where an output inherits error from
elsewhere (an approximation the API documents, such as fastexp_gist's 3%,
q_rsqrt or CORDIC; or statistics computed before it; or the earlier steps
of a chained run), the reference stays the exact math and the golden model
adds that error's bound, propagated to each element (Reference.propagated),
to the rounding bound. When n*u >= 1/2 the bound says nothing and
the case is rejected as malformed rather than passed.

The report of a failure names the tensor, the count of elements outside the
bound, max and mean ULP distance to the correctly rounded reference, and the
worst elements with index, reference, actual value, hex pattern and ULP.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from golden.bundle import Reference
from golden.formats import NumberFormat
from harness.failures import BAD_CASE, CaseFailure

WORST_SHOWN = 5


def gamma(n: int, u: float) -> float:
    if n * u >= 0.5:
        raise CaseFailure(BAD_CASE, f"a reduction of {n} terms at unit roundoff {u:.3g} has no useful "
                                    f"error bound (n*u >= 1/2); use a smaller shape for this format")
    return n * u / (1.0 - n * u)


def tolerance(reference: Reference, fmt: NumberFormat, scale: float = 1.0) -> np.ndarray:
    """Per-element bound. `scale` > 1 only where a catalogue entry documents
    why the primitive needs more operations than its reduction length."""
    n = reference.reduction
    eta = fmt.smallest_subnormal / 2
    rounding = gamma(n, fmt.unit_roundoff) * reference.magnitude if n else np.zeros_like(reference.magnitude)
    bound = scale * (rounding + n * eta)
    if reference.propagated is not None:
        bound = bound + reference.propagated
    return bound


@dataclass
class TensorComparison:
    name: str
    ok: bool
    n_bad: int
    size: int
    max_ulp: int
    mean_ulp: float
    worst_ratio: float    # max |error| / tolerance (inf when the tolerance is 0)
    report: str           # empty when ok


def compare_tensor(name: str, actual_bits: np.ndarray, reference: Reference, fmt: NumberFormat,
                   scale: float = 1.0) -> TensorComparison:
    expected = reference.value
    shape = expected.shape
    if actual_bits.size != expected.size:
        return TensorComparison(name, False, expected.size, expected.size, -1, float("nan"), float("inf"),
                                f"tensor {name}: {actual_bits.size} elements arrived, {expected.size} expected")
    actual = fmt.from_bits(actual_bits).reshape(shape)
    actual_bits = actual_bits.reshape(shape)
    bound = tolerance(reference, fmt, scale)
    with np.errstate(invalid="ignore"):
        error = np.where(actual == expected, 0.0, np.abs(actual - expected))   # equal infinities are exact
    bad = ~(error <= bound)  # NaN counts as bad
    ulp = fmt.ulp_distance(actual_bits, fmt.to_bits(expected)).astype(np.float64)
    ulp[~np.isfinite(actual) & ~(actual == expected)] = np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, error / bound, np.where(error > 0, np.inf, 0.0))
    ratio[np.isnan(ratio)] = np.inf
    finite_ulp = ulp[np.isfinite(ulp)]
    max_ulp = int(ulp.max()) if np.isfinite(ulp).all() else -1
    mean_ulp = float(finite_ulp.mean()) if finite_ulp.size else float("inf")
    n_bad = int(bad.sum())
    worst_ratio = float(ratio.max()) if ratio.size else 0.0
    report = ""
    if n_bad:
        report = _failure_report(name, fmt, expected, actual, actual_bits, bound, ulp, ratio, bad,
                                 max_ulp, mean_ulp, reference.reduction, reference.propagated is not None)
    return TensorComparison(name, n_bad == 0, n_bad, expected.size, max_ulp, mean_ulp, worst_ratio, report)


def _failure_report(name, fmt, expected, actual, actual_bits, bound, ulp, ratio, bad, max_ulp, mean_ulp, n,
                    propagated=False):
    shape = "x".join(map(str, expected.shape))
    width = fmt.bits // 4
    max_text = "inf (non-finite outputs)" if max_ulp < 0 else f"{max_ulp}"
    lines = [f"tensor {name} [{shape}] {fmt.name}: {int(bad.sum())} of {expected.size} elements outside "
             f"tolerance (reduction n={n}{', plus the propagated bound' if propagated else ''}); max ULP {max_text}, mean ULP {mean_ulp:.3g}, "
             f"worst error/tolerance {ratio.max():.3g}",
             f"  {'index':>12} {'reference':>14} {'actual':>14} {'hex':>{width + 2}} {'ULP':>8} {'tolerance':>10}"]
    candidates = np.flatnonzero(bad)
    order = candidates[np.argsort(-ratio.reshape(-1)[candidates], kind="stable")][:WORST_SHOWN]
    for flat in order:
        index = np.unravel_index(flat, expected.shape)
        u = ulp[index]
        lines.append(f"  {str(tuple(int(i) for i in index)):>12} {expected[index]:>14.7g} {actual[index]:>14.7g} "
                     f"{'0x' + format(int(actual_bits[index]), f'0{width}x'):>{width + 2}} "
                     f"{('inf' if not np.isfinite(u) else str(int(u))):>8} {bound[index]:>10.3g}")
    return "\n".join(lines)
