"""The random states of the randomized solvers: seeded as scikit-learn's ``random_state`` asks,
but never NumPy's global state, which library code must not advance (``None`` takes fresh
entropy instead of ``np.random``'s singleton)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["generator", "legacy_random_state"]


def generator(random_state) -> np.random.Generator:
    """A Generator from a seed (None: fresh entropy), a Generator, or a RandomState (which draws
    the seed, so that its state decides the stream)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    return np.random.default_rng(random_state)


def legacy_random_state(random_state) -> np.random.RandomState:
    """``check_random_state``, except that None gives a RandomState seeded from fresh entropy:
    for the solvers whose seeded draws must stay those of a RandomState (GraphLearning's start)."""
    if random_state is None:
        return np.random.RandomState(int(np.random.SeedSequence().generate_state(1)[0]))
    return check_random_state(random_state)
