"""Deterministic generators for the papers' synthetic sets, and scikit-learn's bundled digits.

Every generator takes ``random_state`` (int, np.random.Generator or RandomState) and draws from
its own generator, never from numpy's global one. Outputs are float64 with classes "0".."C-1".
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from ..errors import ConfigError
from .dataset import Dataset


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if random_state is None:
        raise ConfigError("generated datasets need an explicit random_state (an int) to be reproducible")
    return np.random.default_rng(int(random_state))


def _balanced_labels(n_samples: int, n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Class sizes differ by at most one (equal priors), in a random order."""
    y = np.arange(n_samples, dtype=np.int64) % n_classes
    return rng.permutation(y)


def g50c(n_samples: int = 550, n_features: int = 50, bayes_error: float = 0.05,
         random_state=0) -> Dataset:
    """G50C-style data: two unit-covariance Gaussians with equal priors and a given Bayes error.

    Means are ``±mu * e / |e|`` with ``e = (1, ..., 1)`` and ``mu = Phi^{-1}(1 - bayes_error)``, so the
    Bayes rule ``sign(x . e)`` errs with probability ``Phi(-mu) = bayes_error``. Class 1 is the
    ``+mu`` Gaussian. Class sizes are n//2 and n - n//2.
    """
    if not 0 < bayes_error < 0.5:
        raise ConfigError(f"g50c: bayes_error must lie in (0, 0.5), got {bayes_error}")
    rng = _rng(random_state)
    mu = norm.ppf(1.0 - bayes_error)
    direction = np.full(n_features, 1.0 / np.sqrt(n_features))
    y = _balanced_labels(n_samples, 2, rng)
    X = rng.standard_normal((n_samples, n_features)) + np.outer(2.0 * y - 1.0, mu * direction)
    meta = {"mean_norm": float(mu), "direction": "ones/sqrt(d)", "bayes_error": bayes_error}
    return Dataset("g50c", X, y, np.asarray(["0", "1"]), meta=meta)


def _moon_arcs(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """2-D points on interlocking half-circles of radius 1.

    Moon k is an upper arc centred at (k, 0) for even k and a lower arc centred at (k, 0.5) for
    odd k: moons 0 and 1 are scikit-learn's ``make_moons``, and each further pair continues the chain.
    """
    t = rng.uniform(0.0, np.pi, size=y.shape[0])
    up = (y % 2 == 0)
    x0 = y + np.where(up, np.cos(t), -np.cos(t))
    x1 = np.where(up, np.sin(t), 0.5 - np.sin(t))
    return np.column_stack([x0, x1])


def moons(n_samples: int = 1000, n_moons: int = 2, n_features: int = 100, noise: float = 0.15,
          random_state=0) -> Dataset:
    """``n_moons`` interlocking half-moons rotated into ``n_features`` dims, plus Gaussian noise.

    The 2-D arcs are zero-padded to ``n_features`` dims, rotated by a random orthogonal matrix
    (seeded, QR of a Gaussian matrix) and perturbed by isotropic N(0, noise^2 I) noise in every
    dimension (Bühler & Hein's high-dimensional moons). Classes are balanced.
    """
    if n_features < 2:
        raise ConfigError(f"moons: n_features must be >= 2, got {n_features}")
    if n_moons < 2 or n_samples < n_moons:
        raise ConfigError(f"moons: need n_moons >= 2 and n_samples >= n_moons, got {n_moons}, {n_samples}")
    if noise < 0:
        raise ConfigError(f"moons: noise must be >= 0, got {noise}")
    rng = _rng(random_state)
    y = _balanced_labels(n_samples, n_moons, rng)
    Z = np.zeros((n_samples, n_features))
    Z[:, :2] = _moon_arcs(y, rng)
    q, r = np.linalg.qr(rng.standard_normal((n_features, n_features)))
    q *= np.sign(np.diag(r))  # Haar-distributed rotation
    X = Z @ q.T + noise * rng.standard_normal((n_samples, n_features))
    classes = np.asarray([str(i) for i in range(n_moons)])
    name = {2: "two_moons", 4: "four_moons"}.get(n_moons, f"{n_moons}_moons")
    return Dataset(name, X, y, classes)


def two_moons(n_samples: int = 1000, n_features: int = 100, noise: float = 0.15, random_state=0) -> Dataset:
    """Two moons in ``n_features`` dims (see :func:`moons`)."""
    return moons(n_samples, 2, n_features, noise, random_state)


def four_moons(n_samples: int = 4000, n_features: int = 100, noise: float = 0.15, random_state=0) -> Dataset:
    """Four half-moons in ``n_features`` dims (see :func:`moons`)."""
    return moons(n_samples, 4, n_features, noise, random_state)


def digits() -> Dataset:
    """scikit-learn's bundled 8x8 digits (the UCI optdigits test set): 1797x64 float64, 10 classes."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return Dataset("digits", np.asarray(d.data, np.float64), d.target.astype(np.int64),
                   np.asarray([str(i) for i in range(10)]), meta={"source": "sklearn.datasets.load_digits"})
