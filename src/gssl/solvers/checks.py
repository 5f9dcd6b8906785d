"""The estimator contract every solver follows, as checks anyone can run on their own class
(as scikit-learn's ``check_estimator``): ``gssl solvers check NAME_OR_PATH`` prints each failure.

A solver is a scikit-learn estimator over a gssl graph: keyword-only constructor parameters, each
declared in ``_parameter_constraints``, none with a mutable default (a dict or list shared by every
instance); ``clone`` and ``get_params``/``set_params`` round-trip; ``fit(graph, y,
n_classes=None)`` with ``y == -1`` on unlabeled nodes neither changes a parameter nor depends on
anything but the parameters (the same ``random_state`` gives the same results) nor leaves an
array in a reference cycle; it sets ``transduction_`` (a label per node) and, where the method
has class scores, ``decision_function_`` (n, C), finite; a bad value of each declared kind is a
ConfigError naming the parameter, at construction through :func:`make_solver` and again at fit.

Examples
--------
>>> from gssl.solvers.checks import check_solver
>>> check_solver("poisson")  # [] when every check passes, else one message per failure
[]
"""

from __future__ import annotations

import copy
import inspect
import math
from numbers import Integral

import numpy as np

from ..errors import ConfigError, SolverError
from .fit_checks import nonfinite_scores

class ContractError(AssertionError):
    """One broken rule of the estimator contract."""


def small_problem():
    """60 digits of classes 0-2 on an 8-NN graph (two components), 5 labeled nodes per class."""
    from sklearn.datasets import load_digits

    from ..graphs import build_graph

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 3)[:60]
    X, y = X[keep] / 16.0, y[keep]
    codes = np.full(y.size, -1)
    rng = np.random.default_rng(0)
    for c in range(3):
        codes[rng.choice(np.flatnonzero(y == c), 5, replace=False)] = c
    return build_graph(X, {"kind": "knn", "k": 8}), codes


def fast_params(cls) -> dict:
    """The small settings ``cls`` declares for these checks (``SolverTags.fast``; keys it lacks
    dropped), and ``random_state=0`` where it takes one."""
    from .tags import solver_tags

    names, tags = cls._get_param_names(), solver_tags(cls)
    params = {k: v for k, v in (tags.fast if tags else {}).items() if k in names}
    if "random_state" in names:
        params["random_state"] = 0
    return params


def fit_small(est, problem):
    """Fit on the small problem (clusterers unsupervised)."""
    import warnings

    from sklearn.base import is_clusterer

    graph, codes = problem
    y = np.full(codes.size, -1) if is_clusterer(est) else codes
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Graph is not fully connected")
        return est.fit(graph, y, n_classes=3)


# -- the checks: each raises ContractError ----------------------------------------------------------
def check_constraints(cls) -> None:
    missing = sorted(set(cls._get_param_names()) - set(getattr(cls, "_parameter_constraints", {})))
    if missing:
        raise ContractError(f"{cls.__name__}: no _parameter_constraints entry for {missing}")


def check_keyword_only(cls) -> None:
    params = [p for p in inspect.signature(cls.__init__).parameters.values()
              if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    positional = [p.name for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    if positional:
        raise ContractError(f"{cls.__name__}: constructor parameters {positional} can be given by "
                            f"position; make them keyword-only (def __init__(self, *, ...))")


def check_immutable_defaults(cls) -> None:
    """No constructor default is a mutable container: a dict default is one object shared by every
    instance built without that parameter, so that ``est.kernel["sigma"] = 5`` on one changes the
    others (and the class's own default)."""
    mutable = [p.name for p in inspect.signature(cls.__init__).parameters.values()
               if isinstance(p.default, (dict, list, set, bytearray, np.ndarray))]
    if mutable:
        raise ContractError(f"{cls.__name__}: the defaults of {mutable} are mutable containers, "
                            f"shared by every instance; use an immutable default (a str, a tuple, "
                            f"None) and build the container in fit")


def check_params_round_trip(cls, params: dict) -> None:
    from sklearn.base import clone

    est = cls(**params)
    got = est.get_params()
    if set(got) != set(cls._get_param_names()):
        raise ContractError(f"{cls.__name__}: get_params() gives {sorted(got)}, the constructor "
                            f"takes {sorted(cls._get_param_names())}")
    try:
        twin = clone(est)  # scikit-learn checks that the constructor stores each parameter as given
    except RuntimeError as exc:
        raise ContractError(f"{cls.__name__}: clone failed ({exc}); store each constructor "
                            f"parameter unchanged as an attribute of the same name") from None
    if twin.get_params() != got or cls().set_params(**got).get_params() != got:
        raise ContractError(f"{cls.__name__}: get_params/set_params do not round-trip")


def check_fit(cls, params: dict, problem) -> None:
    """fit keeps the params, repeats itself (new instance and refit), and its outputs are sane."""
    est = cls(**params)
    before = copy.deepcopy(est.get_params())
    try:
        first = fit_small(est, problem)
    except SolverError as exc:  # fit's own refusal of what _fit returned (a shape, NaN scores)
        raise ContractError(f"{cls.__name__}: {exc}") from None
    if first is not est:
        raise ContractError(f"{cls.__name__}: fit must return self")
    if est.get_params() != before:
        raise ContractError(f"{cls.__name__}: fit changed a parameter")
    n = problem[1].size
    outputs = {a: np.array(getattr(est, a)) for a in ("decision_function_", "labels_", "transduction_")
               if hasattr(est, a)}
    if "transduction_" not in outputs and "labels_" not in outputs:
        raise ContractError(f"{cls.__name__}: fit sets neither transduction_ nor labels_")
    check_outputs(est, n, cls.__name__)
    for twin in (fit_small(cls(**params), problem), fit_small(est, problem)):
        for attr, value in outputs.items():
            if not np.array_equal(np.asarray(getattr(twin, attr)), value, equal_nan=True):
                raise ContractError(f"{cls.__name__}: a second fit with the same parameters gives "
                                    f"another {attr} (seed every draw from random_state)")


def check_no_arrays_in_cycles(cls, params: dict, problem) -> None:
    """A fit leaves no array in a reference cycle. Reference counting frees an object the moment
    its last reference goes; one in a cycle (a closure over ``self``, an object that points back
    at its owner) waits for Python's cyclic collector, which runs by object counts, not bytes:
    a grid of fits of n x n factors piled up to several times one fit's memory."""
    import gc

    fit_small(cls(**params), problem)  # compiled kernels and caches: loaded before the count
    enabled, debug = gc.isenabled(), gc.get_debug()
    gc.collect()
    gc.disable()
    try:
        fit_small(cls(**params), problem)
        gc.set_debug(gc.DEBUG_SAVEALL)  # keep what the collector finds, to look at it
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(debug)
        if enabled:
            gc.enable()
    arrays, seen = [], set()
    frontier = found
    for _ in range(3):  # an array held by a garbage object, its dict, or a container of those
        nxt = []
        for obj in gc.get_referents(*frontier):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if isinstance(obj, np.ndarray):
                arrays.append(obj)
            # (an instance with a __dict__ slot, asked of its type: hasattr would call a
            # class's own __getattr__, and SQLAlchemy's raises NameError)
            elif isinstance(obj, (dict, list, tuple, set)) or type(obj).__dictoffset__:
                nxt.append(obj)
        frontier = nxt
    held = sum(a.nbytes for a in arrays)
    if held:
        kinds = sorted({type(o).__name__ for o in found if not isinstance(o, (dict, list, tuple))})
        raise ContractError(f"{cls.__name__}: a fit leaves {len(arrays)} array(s), {held} bytes, in "
                            f"reference cycles (objects: {', '.join(kinds[:6])}); store plain "
                            "attributes instead of closures over self, or break the cycle")


def check_outputs(est, n: int, name: str) -> None:
    """transduction_ is one label per node; decision_function_, if any, (n, C) and finite."""
    labels = np.asarray(getattr(est, "transduction_", getattr(est, "labels_", None)))
    if labels.shape != (n,):
        raise ContractError(f"{name}: transduction_ has shape {labels.shape}, expected ({n},): one "
                            f"label per graph node")
    scores = getattr(est, "decision_function_", None)
    if scores is not None:
        scores = np.asarray(scores)
        if scores.ndim != 2 or scores.shape[0] != n:
            raise ContractError(f"{name}: decision_function_ has shape {scores.shape}, expected ({n}, C)")
        problem = nonfinite_scores(name, scores)  # fit refuses them first; a plugin's own fit may not
        if problem:
            raise ContractError(problem)


def bad_values(constraint) -> list:
    """Values of the kinds a constraint exists to refuse (another constraint of the same
    parameter may allow some: the caller drops those)."""
    from sklearn.utils._param_validation import Interval, StrOptions

    from .params import Check

    if isinstance(constraint, Interval):
        out = [True, "1", 1.5 if constraint.type is Integral else math.nan]
        if constraint.left is not None:
            out.append(constraint.left if constraint.closed in ("right", "neither") else constraint.left - 1)
        if constraint.right is not None and constraint.right != math.inf:
            out.append(constraint.right if constraint.closed in ("left", "neither") else constraint.right + 1)
        return out
    if isinstance(constraint, StrOptions):
        return ["no-such-option", 1]
    if isinstance(constraint, Check):
        return [object(), "no-such-option"]
    if constraint == "boolean":
        return ["yes", 1]
    if constraint == "random_state":
        return [-1, "seed"]
    return []


def bad_cases(cls) -> list[tuple[str, object]]:
    """(parameter, value) pairs each constraint must refuse."""
    from sklearn.utils._param_validation import make_constraint

    cases = []
    for param, constraints in sorted(cls._parameter_constraints.items()):
        objects = [make_constraint(c) for c in constraints]
        cases += [(param, v) for c in constraints for v in bad_values(c)
                  if not any(o.is_satisfied_by(v) for o in objects)]
    return cases


def check_bad_value(cls, param: str, value) -> None:
    try:
        cls(**{param: value})._validate_params()
    except ConfigError as exc:
        if f"'{param}' parameter of {cls.__name__}" not in str(exc):
            raise ContractError(f"{cls.__name__}: {param}={value!r} is refused without naming the "
                                f"parameter: {exc}") from None
        return
    raise ContractError(f"{cls.__name__}: {param}={value!r} is accepted; its constraint refuses it")


def check_fit_validates(cls, params: dict, problem) -> None:
    """fit validates too (a set_params or an attribute assignment bypasses make_solver)."""
    from sklearn.utils._param_validation import Interval

    numeric = [p for p, cs in sorted(cls._parameter_constraints.items())
               if any(isinstance(c, Interval) for c in cs)]
    if not numeric:
        return
    est = cls(**params).set_params(**{numeric[0]: True})
    try:
        fit_small(est, problem)
    except ConfigError as exc:
        if f"'{numeric[0]}' parameter" in str(exc):
            return
    raise ContractError(f"{cls.__name__}: fit accepted {numeric[0]}=True set after construction; "
                        f"call self._validate_params() at the start of fit")


def check_solver(solver, params: dict | None = None) -> list[str]:
    """Run every check on a solver (a name, an import path ``module:Class`` or a class);
    return one message per failure ([] when the contract holds)."""
    from .registry import solver_class

    cls = solver_class(solver) if isinstance(solver, str) else solver
    params = {**fast_params(cls), **(params or {})}
    failures = []

    def run(check, *args):
        try:
            check(*args)
        except ContractError as exc:
            failures.append(str(exc))
        except Exception as exc:  # a plugin's own bug: reported, the other checks still run
            failures.append(f"{cls.__name__}: {check.__name__} raised {type(exc).__name__}: {exc}")

    run(check_constraints, cls)
    run(check_keyword_only, cls)
    run(check_immutable_defaults, cls)
    if failures:  # the rest builds the estimator from its declared parameters
        return failures
    run(check_params_round_trip, cls, params)
    problem = small_problem()
    run(check_fit, cls, params, problem)
    run(check_no_arrays_in_cycles, cls, params, problem)
    for param, value in bad_cases(cls):
        run(check_bad_value, cls, param, value)
    run(check_fit_validates, cls, params, problem)
    return failures
