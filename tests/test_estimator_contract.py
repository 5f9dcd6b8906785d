"""The estimator contract, for every solver in the registry (issue 17).

Keyword-only constructors whose every parameter has a declared constraint; scikit-learn's clone
and get_params/set_params work; fit neither changes a parameter nor depends on anything but the
parameters (the same random_state gives the same results); a bad value of each kind is a
ConfigError that names the parameter.
"""

import copy
import inspect
import math
from numbers import Integral

import numpy as np
import pytest
from sklearn.base import clone, is_clusterer
from sklearn.datasets import load_digits
from sklearn.utils._param_validation import Interval, StrOptions, make_constraint

from gssl.errors import ConfigError
from gssl.graphs import build_graph
from gssl.solvers.params import Check
from gssl.solvers.registry import SOLVERS, make_solver

NAMES = sorted(SOLVERS)

# the small graph has two components (spectral clustering warns; every component has labels)
pytestmark = pytest.mark.filterwarnings("ignore:Graph is not fully connected")

# small, fast settings on the 60-node graph; keys a solver does not have are dropped, so a
# renamed parameter costs speed here, not a failure
FAST = {
    "label_spreading": {"n_neighbors": 5},
    "plaplace": {"max_iter": 500, "tol": 1e-4},
    "poisson_mbo": {"n_outer": 2, "n_inner": 5},
    "mtv": {"n_trials": 1, "max_iter": 30},
    "kmeans": {"n_init": 2},
    "ssdl_ga": {"n_atoms": 10, "k": 4, "max_iter": 2, "dict_max_iter": 5, "sc_max_iter": 10},
    "sc_svm": {"n_atoms": 10, "k": 4, "max_iter": 2, "dict_max_iter": 5, "sc_max_iter": 10,
               "cv": 2},
    "tv_rls": {"max_iter": 10, "prox_max_iter": 50},
    "tv_svm": {"max_iter": 10, "prox_max_iter": 50},
    "cheeger_rls": {"max_iter": 5, "prox_max_iter": 50},
    "cheeger_svm": {"max_iter": 5, "prox_max_iter": 50},
    "lap_rls_simplex": {"max_iter": 10},
    "lap_svm_mc": {"max_iter": 10},
}


def _params(name):
    names = SOLVERS[name]._get_param_names()
    params = {k: v for k, v in FAST.get(name, {}).items() if k in names}
    if "random_state" in names:
        params["random_state"] = 0
    return params


@pytest.fixture(scope="module")
def problem():
    """60 digits of classes 0-2 on an 8-NN graph (two components), 5 labeled nodes per class."""
    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 3)[:60]
    X, y = X[keep] / 16.0, y[keep]
    codes = np.full(y.size, -1)
    rng = np.random.default_rng(0)
    for c in range(3):
        codes[rng.choice(np.flatnonzero(y == c), 5, replace=False)] = c
    return build_graph(X, {"kind": "knn", "k": 8}), codes


def _fit(est, problem):
    graph, codes = problem
    y = np.full(codes.size, -1) if is_clusterer(est) else codes  # clusterers: unsupervised
    return est.fit(graph, y, n_classes=3)


# -- declarations --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_has_a_constraint(name):
    cls = SOLVERS[name]
    missing = sorted(set(cls._get_param_names()) - set(cls._parameter_constraints))
    assert not missing, f"{cls.__name__}: no constraint for {missing}"
    assert not hasattr(cls, "check_params")  # the old validation hook is no longer called


@pytest.mark.parametrize("name", NAMES)
def test_constructor_is_keyword_only(name):
    cls = SOLVERS[name]
    params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    positional = [p.name for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert not positional, f"{cls.__name__}: positional parameters {positional}"
    with pytest.raises(TypeError):
        cls(*[p.default for p in params[:1]])


@pytest.mark.parametrize("name", NAMES)
def test_clone_and_get_set_params_round_trip(name):
    cls = SOLVERS[name]
    est = make_solver(name, _params(name))
    params = est.get_params()
    assert set(params) == set(cls._get_param_names())
    twin = clone(est)  # scikit-learn checks that the constructor stores each parameter as given
    assert twin is not est and twin.get_params() == params
    assert cls(**params).get_params() == params
    assert cls().set_params(**params).get_params() == params
    defaults = cls().get_params()
    assert clone(twin).set_params(**defaults).get_params() == defaults


# -- fitting -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_fit_keeps_the_params_and_repeats_itself(name, problem):
    est = make_solver(name, _params(name))
    before = copy.deepcopy(est.get_params())
    first = _fit(est, problem)
    assert est.get_params() == before, "fit changed a parameter"
    outputs = {a: np.array(getattr(first, a)) for a in ("decision_function_", "labels_",
                                                        "transduction_") if hasattr(first, a)}
    assert outputs
    again = _fit(make_solver(name, _params(name)), problem)
    refit = _fit(est, problem)  # the same instance, fitted again
    for attr, value in outputs.items():
        np.testing.assert_array_equal(getattr(again, attr), value, err_msg=attr)
        np.testing.assert_array_equal(getattr(refit, attr), value, err_msg=attr)


# -- bad values ----------------------------------------------------------------------------------
def _bad_values(constraint):
    """Values of the kinds a constraint exists to refuse (some may be allowed by another
    constraint of the same parameter; the caller drops those)."""
    if isinstance(constraint, Interval):
        out = [True, "1"]
        if constraint.type is Integral:
            out.append(1.5)
        else:
            out.append(math.nan)
        if constraint.left is not None:
            out.append(constraint.left if constraint.closed in ("right", "neither")
                       else constraint.left - 1)
        if constraint.right is not None and constraint.right != math.inf:
            out.append(constraint.right if constraint.closed in ("left", "neither")
                       else constraint.right + 1)
        return out
    if isinstance(constraint, StrOptions):
        return ["no-such-option", 1]
    if isinstance(constraint, Check):
        return [object(), "no-such-option"]
    if constraint == "boolean":
        return ["yes", 1]
    if constraint == "random_state":
        return [-1, "seed"]
    return []  # None


def _id(value) -> str:
    """A test id that is the same in every run (an object's repr holds its address)."""
    return repr(value) if isinstance(value, (int, float, str, bool, type(None), list, dict)) \
        else type(value).__name__


def _bad_cases():
    cases = []
    for name in NAMES:
        for param, constraints in sorted(SOLVERS[name]._parameter_constraints.items()):
            objects = [make_constraint(c) for c in constraints]
            bad = [v for c in constraints for v in _bad_values(c)
                   if not any(o.is_satisfied_by(v) for o in objects)]
            assert bad, f"{name}.{param}: no value of a refused kind found"
            cases += [pytest.param(name, param, v, id=f"{name}-{param}-{_id(v)}"[:60]) for v in bad]
    return cases


@pytest.mark.parametrize("name, param, value", _bad_cases())
def test_a_bad_value_is_a_config_error_naming_the_parameter(name, param, value):
    with pytest.raises(ConfigError, match=f"'{param}' parameter of {SOLVERS[name].__name__}"):
        make_solver(name, {param: value})


@pytest.mark.parametrize("name", NAMES)
def test_fit_validates_params_set_after_construction(name, problem):
    """fit validates too (a set_params or an attribute assignment bypasses make_solver)."""
    cls = SOLVERS[name]
    numeric = [p for p, cs in sorted(cls._parameter_constraints.items())
               if any(isinstance(c, Interval) for c in cs)]
    assert numeric, f"{cls.__name__} declares no numeric parameter"
    est = make_solver(name, _params(name)).set_params(**{numeric[0]: True})
    with pytest.raises(ConfigError, match=f"'{numeric[0]}' parameter"):
        _fit(est, problem)
