"""Modularity MBO: its eigenpairs, its stop at a fixed point, and its labels beside GraphLearning
1.7.5's on digits (deterministic: the same labels on >= 99.5 % of the unlabeled points)."""
import graphlearning as gl
import numpy as np
import pytest

from gssl.errors import SolverError
from gssl.optim.modularity_mbo import modularity_mbo

from graph_helpers import count_chebyshev_filters, share_of_graphlearnings_labels
from test_graph_learning import codes_for, digits, draw  # noqa: F401  (digits: the fixture)


@pytest.fixture(scope="module")
def modularity_matrix(digits):
    """M = L + (gamma / m) d d^T of digits' W at gamma 0.5 (m = sum d / 2; the W has no
    self-loop) and its eigenvalues: one dense solve for the tests of the eigenpairs below."""
    _, _, W = digits
    d = np.asarray(W.sum(axis=1)).ravel()
    M = (np.diag(d) - W.toarray()) + 0.5 / (0.5 * d.sum()) * np.outer(d, d)
    return M, np.linalg.eigvalsh(M)


@pytest.mark.parametrize("ceiling", [None, 1e-12])
def test_eigenpairs_match_a_dense_solve(ceiling, digits, modularity_matrix, monkeypatch):
    """The Chebyshev-filtered Lanczos solve (its ceiling from the Voronoi cells), and the
    shift-invert fallback when the check of the ceiling fails (a ceiling below the spectrum)."""
    import gssl.optim.modularity_mbo as mm

    _, _, W = digits
    calls = count_chebyshev_filters(monkeypatch)
    if ceiling is not None:
        monkeypatch.setattr(mm, "_spectrum_ceiling", lambda *a: ceiling)
    lam, X = mm._eigenpairs(W, 12, 0.5)
    assert len(calls) > 0
    M, eigenvalues = modularity_matrix
    np.testing.assert_allclose(lam, eigenvalues[:12], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(M @ X, X * lam, atol=1e-7)
    np.testing.assert_allclose(X.T @ X, np.eye(12), atol=1e-10)


def test_the_ceiling_bounds_the_eigenvalue_of_its_rank(digits, modularity_matrix):
    import gssl.optim.modularity_mbo as mm
    from gssl.optim.graph_weights import zero_diagonal_weights

    _, _, W = digits
    Wc, d = zero_diagonal_weights(W)
    L = (np.diag(d) - Wc.toarray())
    u = np.sqrt(0.5 / (0.5 * d.sum())) * d
    lam = modularity_matrix[1]  # of L + u u^T
    import scipy.sparse as sp
    b = mm._spectrum_ceiling(W, sp.csr_matrix(L), u, 12, 2 * d.max() + u @ u)
    assert lam[11] < b < lam[-1]


def test_stopping_at_a_fixed_point_changes_no_label(digits):
    _, y, W = digits
    codes = codes_for(y, draw(y, 1, 11))
    early, _, info = modularity_mbo(W, codes, 10)
    assert info["fixed_point"] and info["steps"] < 20
    full, _, _ = modularity_mbo(W, codes, 10, n_outer=info["steps"] + 5)
    np.testing.assert_array_equal(early, full)


def test_an_epsilon_above_the_labels_norm_is_refused(digits):
    _, y, W = digits
    with pytest.raises(SolverError, match="epsilon"):
        modularity_mbo(W, codes_for(y, draw(y, 1, 11)), 10, epsilon=10.0)


@pytest.mark.parametrize("per_class", [1, 5])
def test_labels_agree_with_graphlearning(per_class, digits, monkeypatch):
    """GraphLearning 1.7.5's modularity_mbo reads an undefined module global ``k`` (NameError)
    where it means the number of classes: it is set to digits' 10 here."""
    monkeypatch.setattr(gl.ssl, "k", 10, raising=False)
    _, _, W = digits
    model = gl.ssl.modularity_mbo(W)
    assert share_of_graphlearnings_labels("modularity_mbo", model, per_class, digits) >= 0.995
