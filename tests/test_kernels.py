import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from gssl.errors import ConfigError
from gssl.optim.kernels import kernel_matrix, median_distance, validate_kernel

rng = np.random.default_rng(0)
X, Y = rng.normal(size=(30, 5)), rng.normal(size=(7, 5))


def test_rbf_matches_definition_and_sklearn():
    K = kernel_matrix(X, Y, {"kind": "rbf", "sigma": 1.5})
    d2 = ((X[:, None, :] - Y[None]) ** 2).sum(-1)
    np.testing.assert_allclose(K, np.exp(-d2 / (2 * 1.5**2)), rtol=1e-12)
    np.testing.assert_allclose(K, rbf_kernel(X, Y, gamma=1 / (2 * 1.5**2)))
    Kxx = kernel_matrix(X, spec={"kind": "rbf", "sigma": 2.0})
    assert Kxx.shape == (30, 30) and np.allclose(np.diag(Kxx), 1.0) and np.allclose(Kxx, Kxx.T)


def test_linear_and_polynomial_match_sklearn():
    np.testing.assert_allclose(kernel_matrix(X, Y, {"kind": "linear"}), X @ Y.T)
    np.testing.assert_allclose(kernel_matrix(X, Y, {"kind": "linear"}), linear_kernel(X, Y))
    K = kernel_matrix(X, Y, {"kind": "polynomial", "degree": 2, "coef0": 0.5, "gamma": 0.3})
    np.testing.assert_allclose(K, (0.3 * X @ Y.T + 0.5) ** 2)
    np.testing.assert_allclose(kernel_matrix(X, None, {"kind": "polynomial"}),
                               polynomial_kernel(X, degree=3, gamma=1.0, coef0=1.0))


@pytest.mark.parametrize("spec", [{"kind": "rbf", "sigma": 0.7}, {"kind": "linear"},
                                  {"kind": "polynomial", "degree": 2}])
def test_sparse_input_equals_dense(spec):
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.8] = 0.0
    K = kernel_matrix(sp.csr_matrix(Xs), sp.csr_matrix(Y), spec)
    assert isinstance(K, np.ndarray) and K.dtype == np.float64
    np.testing.assert_allclose(K, kernel_matrix(Xs, Y, spec), atol=1e-12)


def test_spec_as_second_positional_argument():
    np.testing.assert_array_equal(kernel_matrix(X, {"kind": "linear"}), X @ X.T)


@pytest.mark.parametrize("spec", [None, {"kind": "gauss"}, {"kind": "rbf", "sigma": 0},
                                  {"kind": "rbf", "gamma": 1.0},
                                  {"kind": "polynomial", "degree": 0},
                                  {"kind": "rbf", "sigma": "wide"}])
def test_bad_specs_raise_config_error(spec):
    with pytest.raises(ConfigError):
        kernel_matrix(X, Y, spec)


def test_validate_fills_defaults():
    assert validate_kernel({"kind": "rbf"}) == {"kind": "rbf", "sigma": "median"}
    assert validate_kernel("rbf") == {"kind": "rbf", "sigma": "median"}  # a bare kind: its defaults
    assert validate_kernel("linear") == {"kind": "linear"}
    with pytest.raises(ConfigError, match=r"one of \['linear', 'polynomial', 'rbf'\] or a mapping"):
        validate_kernel("gaussian")
    with pytest.raises(ConfigError, match="positive number or one of \\['median'\\]"):
        validate_kernel({"kind": "rbf", "sigma": "mean"})


def test_median_heuristic_is_the_median_pairwise_distance_of_the_expansion_points():
    from scipy.spatial.distance import pdist

    assert median_distance(X) == pytest.approx(np.median(pdist(X)), rel=1e-12)
    assert median_distance(sp.csr_matrix(X)) == pytest.approx(np.median(pdist(X)), rel=1e-12)
    # fit k(X, X) and out-of-sample k(Y, X) use the same width: the one of X
    sigma = np.median(pdist(X))
    np.testing.assert_allclose(kernel_matrix(Y, X, {"kind": "rbf"}),
                               rbf_kernel(Y, X, gamma=1 / (2 * sigma**2)), rtol=1e-12)
    np.testing.assert_allclose(kernel_matrix(X, None, {"kind": "rbf"}),
                               rbf_kernel(X, gamma=1 / (2 * sigma**2)), rtol=1e-12)
    # scale-free: pixels in 0..255 get the kernel l2-scaled data gets, up to the scale
    np.testing.assert_allclose(kernel_matrix(255 * X, None, {"kind": "rbf"}),
                               kernel_matrix(X, None, {"kind": "rbf"}), rtol=1e-10)


def test_median_heuristic_samples_large_sets_with_a_fixed_seed_and_refuses_a_single_point():
    big = np.random.default_rng(1).normal(size=(3000, 4))
    a, b = median_distance(big), median_distance(big)
    assert a == b and abs(a - median_distance(big, max_points=3000)) < 0.05 * a
    with pytest.raises(ConfigError, match="two distinct points.*give kernel.sigma a number"):
        median_distance(np.ones((5, 3)))
