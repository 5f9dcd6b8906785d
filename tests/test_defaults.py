"""Every registered solver, built with its constructor defaults only, gives a sensible result on
scikit-learn's digits at 1, 5 and 10 labels per class (issue #20): a new user's first call works.

One fixed draw per label count, the 10-NN graph of ``gssl.build_graph``'s defaults (kernel methods
take the features it keeps). A randomized solver gets ``random_state=0``, its one non-default: unseeded,
it draws fresh entropy, and a floor must not rest on the draw (k-means fell under its floor once in
300 seeds, a local minimum of 69.5 %; at every other seed 78.6-79.8 %). Classifiers are scored by accuracy on the unlabeled digits, clusterers
(which ignore the labels) by clustering accuracy. The floors sit a few points under what the
defaults reached when they were set (2026-11-25, in the comment beside each), so that a change of
defaults or numerics that costs a method its footing fails here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import is_clusterer
from sklearn.datasets import load_digits

import gssl
from gssl.metrics import clustering_accuracy
from gssl.solvers.registry import SOLVERS
from gssl.solvers.tags import solver_tags

pytestmark = pytest.mark.slow

# solver -> floors (accuracy % by labels per class), declared on each class (SolverTags.floors,
# gssl.solvers.tags) a few points under what its defaults reached. The slowest defaults (half a
# minute to minutes for three fits on 1,797 digits) declare one label count: one floor still
# catches a change that costs the method its footing
FLOORS = {name: floors for name in SOLVERS
          if (floors := getattr(solver_tags(SOLVERS[name]), "floors", None))}


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return gssl.build_graph(X, k=10), y


def _labels(y, n, seed):
    rng = np.random.default_rng(seed)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == c), n, replace=False) for c in range(10)])
    y_train = np.full_like(y, -1)
    y_train[lab] = y[lab]
    return y_train


def test_every_registered_solver_has_floors():
    assert set(FLOORS) == set(SOLVERS)


@pytest.mark.parametrize("name", sorted(SOLVERS.names()))  # an older name is the same class
def test_defaults_reach_the_floor_on_digits(digits, name):
    G, y = digits
    counts = tuple(FLOORS[name])
    scores = []
    for n in counts:
        y_train = _labels(y, n, seed=100 * n)
        est = gssl.make_solver(name)
        if "random_state" in est.get_params():
            est.set_params(random_state=0)
        with warnings.catch_warnings():  # convergence notes of the iterative ones are not the point
            warnings.simplefilter("ignore")
            est.fit(G, y_train)
        pred, u = np.asarray(est.predict()), y_train == -1
        scores.append(clustering_accuracy(y[u], pred[u]) if is_clusterer(est)
                      else 100.0 * float(np.mean(pred[u] == y[u])))
    floors = [FLOORS[name][n] for n in counts]
    failed = [f"{n} labels/class: {s:.1f} % < {f} %" for n, s, f in zip(counts, scores, floors) if s < f]
    assert not failed, f"{name} with its defaults: " + "; ".join(failed)
