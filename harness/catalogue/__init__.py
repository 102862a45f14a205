"""Case catalogues: one module per primitive family, each a list of OpEntry.

The rule for inputs (issue 25): inputs that keep every term alive. A term
whose input makes it the identity cannot be checked: a factor that is 1, a
sum that is 0, a maximum that is always at the same index. So, for every
formula with a scale, a sum or a maximum, an entry has cases where that term
is not the identity:

- scales and sums that enter as factors take values other than 0 and 1
  (cross-entropy's target sum S: one-hot and normalised targets give S = 1,
  so the catalogue also has S near 2.5 and S of either sign);
- a maximum (reductions, max pooling, softmax, cross-entropy's max
  subtraction) is first, last and in the middle of its range in some case,
  far enough above the rest that missing it changes the result;
- a coefficient that multiplies another input (weight decay, a learning
  rate, a slope) is non-zero together with that input (weights non-zero);
- outputs start as poison (the runner's NaN), never as zero, unless the API
  says the call accumulates: an accumulate where the call must overwrite
  then shows;
- each size check of the API is exercised on each blob it names, inputs and
  outputs, one at a time (residual: `mismatch`);
- random numbers are checked over long streams of one generator, not only
  the first draw of a freshly seeded one, and from every kind of state the
  API allows a caller to hand it (random_stream: seeded, index 17, index 0
  and 9);
- every public entry point is called by some case, the wrappers that chain
  two steps too (a layer's _bw_cl: step bw), not only the steps they chain.

Edge values go through the entry's `input_values` (part of the golden key).
"""
import importlib
import pkgutil
from functools import lru_cache


def family_names() -> list[str]:
    """The catalogue's families: the modules of this package, found by scanning
    it (a new family is one new module with an ENTRIES list), not imported."""
    return sorted(module.name for module in pkgutil.iter_modules(__path__) if not module.name.startswith("_"))


@lru_cache(maxsize=None)
def entries(family: str) -> tuple:
    """One family's entries (its module imported only now)."""
    return tuple(importlib.import_module(f"{__name__}.{family}").ENTRIES)


def families() -> dict[str, tuple]:
    """family name -> its entries, for every family."""
    return {name: entries(name) for name in family_names()}
