"""The estimator contract (gssl.solvers.checks, public as `gssl solvers check`), for every solver
in the registry: keyword-only constructors whose every parameter has a declared constraint;
scikit-learn's clone and get_params/set_params work; fit neither changes a parameter nor depends
on anything but the parameters (the same random_state gives the same results); a fit leaves no
array in a reference cycle; a bad value of each kind is a ConfigError that names the parameter.
"""

import pytest

from gssl.solvers import checks
from gssl.solvers.registry import SOLVERS, make_solver

NAMES = sorted(SOLVERS.names())  # an older name is the same class


@pytest.fixture(scope="module")
def problem():
    return checks.small_problem()


def _params(name):
    return checks.fast_params(SOLVERS[name])


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_has_a_constraint(name):
    checks.check_constraints(SOLVERS[name])
    assert not hasattr(SOLVERS[name], "check_params")  # the old validation hook is no longer called


@pytest.mark.parametrize("name", NAMES)
def test_constructor_is_keyword_only(name):
    checks.check_keyword_only(SOLVERS[name])
    with pytest.raises(TypeError):
        SOLVERS[name](None)


@pytest.mark.parametrize("name", NAMES)
def test_no_default_is_a_shared_mutable_container(name):
    checks.check_immutable_defaults(SOLVERS[name])


def test_a_dict_default_is_named_by_the_check():
    """KernelRLS's kernel default was one dict shared by every kernel solver: editing one
    instance's kernel changed every other's default."""
    from gssl.solvers.rls import KernelRLS

    class SharedDefault(KernelRLS):
        def __init__(self, *, kernel={"kind": "rbf", "sigma": "median"}, gamma_A=1e-6):  # noqa: B006
            super().__init__(kernel=kernel, gamma_A=gamma_A)

    with pytest.raises(checks.ContractError, match=r"the defaults of \['kernel'\] are mutable"):
        checks.check_immutable_defaults(SharedDefault)
    a, b = make_solver("lap_rls"), make_solver("tv_rls")
    assert a.kernel == b.kernel == "rbf"  # (a str: nothing to edit in place)


@pytest.mark.parametrize("name", NAMES)
def test_clone_and_get_set_params_round_trip(name):
    checks.check_params_round_trip(SOLVERS[name], _params(name))


@pytest.mark.parametrize("name", NAMES)
def test_fit_keeps_the_params_and_repeats_itself(name, problem):
    checks.check_fit(SOLVERS[name], _params(name), problem)


@pytest.mark.parametrize("name", NAMES)
def test_fit_leaves_no_array_in_a_reference_cycle(name, problem):
    checks.check_no_arrays_in_cycles(SOLVERS[name], _params(name), problem)


def test_the_cycle_check_finds_an_array_held_by_a_closure_over_self(problem):
    """As KernelSystem did (its n x n factor outlived each fit until the cyclic collector ran)."""
    from gssl.solvers.graph_learning import PoissonLearning

    class Leaky(PoissonLearning):
        def fit(self, graph, y, n_classes=None):
            out = super().fit(graph, y, n_classes)
            self._scores = lambda: self.decision_function_  # self -> lambda -> self
            return out

    with pytest.raises(checks.ContractError, match=r"Leaky: a fit leaves [1-9][0-9]* array\(s\).*in "
                                                   r"reference cycles \(objects: Leaky"):
        checks.check_no_arrays_in_cycles(Leaky, {}, problem)


def test_the_cycle_check_asks_no_object_for_its_attributes(problem):
    """Garbage of other code may sit among the cycles' objects: one whose __getattr__ raises
    something else than AttributeError (SQLAlchemy's registry raises NameError, which once made
    hasattr(obj, '__dict__') fail the check in a test run) is looked at through its type."""
    from gssl.solvers.graph_learning import PoissonLearning

    class Moody:
        __slots__ = ("owner",)

        def __getattr__(self, name):
            raise NameError(name)

    class Cyclic(PoissonLearning):
        def fit(self, graph, y, n_classes=None):
            out = super().fit(graph, y, n_classes)
            box = {"moody": Moody(), "scores": self.decision_function_.copy()}
            box["self"] = box  # a dict in a cycle, holding an array and the moody object
            return out

    with pytest.raises(checks.ContractError, match=r"Cyclic: a fit leaves 1 array\(s\)"):
        checks.check_no_arrays_in_cycles(Cyclic, {}, problem)


def _id(value) -> str:
    """A test id that is the same in every run (an object's repr holds its address)."""
    return repr(value) if isinstance(value, (int, float, str, bool, type(None), list, dict)) \
        else type(value).__name__


def _bad_cases():
    cases = []
    for name in NAMES:
        found = checks.bad_cases(SOLVERS[name])
        params = {p for p, _ in found}
        assert params == set(SOLVERS[name]._parameter_constraints) - _free(name), \
            f"{name}: no value of a refused kind found for some parameter"
        cases += [pytest.param(name, p, v, id=f"{name}-{p}-{_id(v)}"[:60]) for p, v in found]
    return cases


def _free(name):
    """Parameters whose constraints allow every value (None among them): nothing to refuse."""
    return {p for p, cs in SOLVERS[name]._parameter_constraints.items() if not any(
        checks.bad_values(c) for c in cs)}


@pytest.mark.parametrize("name, param, value", _bad_cases())
def test_a_bad_value_is_a_config_error_naming_the_parameter(name, param, value):
    checks.check_bad_value(SOLVERS[name], param, value)


@pytest.mark.parametrize("name", NAMES)
def test_fit_validates_params_set_after_construction(name, problem):
    checks.check_fit_validates(SOLVERS[name], _params(name), problem)


def test_a_broken_contract_is_reported_not_passed(problem):
    """The checks can fail: a positional parameter, a missing constraint, a fit that mutates a
    parameter and returns NaN scores are each named."""
    import numpy as np

    from gssl.solvers.base import SemiSupervisedClassifier

    class Broken(SemiSupervisedClassifier):
        _parameter_constraints = {}

        def __init__(self, alpha=1.0):
            self.alpha = alpha

        def _fit(self, graph, codes, n_classes):
            self.alpha += 1
            return np.full((graph.n_nodes, n_classes), np.nan)

    failures = checks.check_solver(Broken)
    assert any("no _parameter_constraints entry for ['alpha']" in f for f in failures)
    assert any("keyword-only" in f for f in failures)
    Broken._parameter_constraints = {"alpha": [float]}
    with pytest.raises(checks.ContractError, match="fit changed a parameter|NaN"):
        checks.check_fit(Broken, {}, problem)
