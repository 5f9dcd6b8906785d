"""Deterministic generators for the papers' synthetic sets, and scikit-learn's bundled digits.

Every generator takes ``random_state`` (int, np.random.Generator or RandomState) and draws from
its own generator, never from numpy's global one. Outputs are float64 with classes "0".."C-1".
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import ndtri  # scipy.stats' norm.ppf, without importing scipy.stats (0.5 s)

from ..errors import ConfigError
from .dataset import Dataset


def _rng(random_state, where: str) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if random_state is None:
        raise ConfigError("generated datasets need an explicit random_state (an int) to be reproducible")
    return np.random.default_rng(_seed_param(where, random_state))


def _seed_param(where: str, value) -> int:
    """A seed: an integer >= 0 (numpy's generators take no other), else ConfigError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ConfigError(f"{where}: random_state must be an integer >= 0 (a seed, e.g. random_state: 0), "
                          f"got {value!r}")
    return int(value)


def _int_param(where: str, key: str, value, minimum: int) -> int:
    """An integer parameter >= ``minimum`` (not a bool, a float or text), else ConfigError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ConfigError(f"{where}: {key} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _number_param(where: str, key: str, value, low: float, high: float = np.inf,
                  open_low: bool = False, open_high: bool = False) -> float:
    """A finite real number in [low, high] (ends open where asked), else ConfigError."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and (value > low if open_low else value >= low) and (value < high if open_high else value <= high)
    if not ok:
        span = (f"> {low}" if open_low else f">= {low}") if high == np.inf else \
            f"in {'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"
        raise ConfigError(f"{where}: {key} must be a number {span}, got {value!r}")
    return float(value)


def check_params(name: str, params: dict) -> dict:
    """The parameters of generator ``name`` (``g50c``, ``two_moons``, ``four_moons``; with the
    defaults filled in) checked as the generator checks them, with its message: what ``gssl config
    check`` runs before any job. Other names are returned unchecked."""
    if name == "g50c":
        n = _int_param("g50c", "n_samples", params.get("n_samples"), 2)
        d = _int_param("g50c", "n_features", params.get("n_features"), 1)
        _number_param("g50c", "bayes_error", params.get("bayes_error"), 0, 0.5, open_low=True, open_high=True)
        _check_memory(name, n, d, 3 * n * d * 8)  # the draw, the class means, their sum
    elif name in ("two_moons", "four_moons"):
        _moons_params(name, 2 if name == "two_moons" else 4, params.get("n_samples"), params.get("n_features"),
                      params.get("noise"))
    else:
        return params
    if "random_state" in params and not isinstance(params["random_state"],
                                                   (np.random.Generator, np.random.RandomState)):
        _seed_param(name, params["random_state"])
    return params


def _moons_params(name: str, n_moons, n_samples, n_features, noise) -> None:
    _int_param(name, "n_moons", n_moons, 2)
    n = _int_param(name, "n_samples", n_samples, n_moons)
    d = _int_param(name, "n_features", n_features, 2)
    _number_param(name, "noise", noise, 0)
    # padded arcs, their rotation, the noise and the sum (n x d each); the rotation and its draw
    _check_memory(name, n, d, 4 * n * d * 8 + 2 * d * d * 8)


def _check_memory(name: str, n: int, d: int, peak: int) -> None:
    """ConfigError, before anything is allocated, when generating needs more memory than the
    machine has (a MemoryError traceback at job time otherwise)."""
    total = physical_memory()
    if total is not None and peak > total:
        raise ConfigError(f"{name}: n_samples={n} x n_features={d} needs about {_gb(peak)} of memory to "
                          f"generate (float64), more than the {_gb(total)} this machine has; lower "
                          f"n_samples or n_features")


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine (None where the OS does not say)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _gb(n_bytes: int) -> str:
    return f"{n_bytes / 1e9:,.3g} GB" if n_bytes < 1e12 else f"{n_bytes / 1e12:,.0f} TB"


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
    check_params("g50c", {"n_samples": n_samples, "n_features": n_features, "bayes_error": bayes_error})
    rng = _rng(random_state, "g50c")
    mu = ndtri(1.0 - bayes_error)
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
    name = {2: "two_moons", 4: "four_moons"}.get(n_moons, f"{n_moons}_moons")
    _moons_params(name, n_moons, n_samples, n_features, noise)
    rng = _rng(random_state, name)
    y = _balanced_labels(n_samples, n_moons, rng)
    Z = np.zeros((n_samples, n_features))
    Z[:, :2] = _moon_arcs(y, rng)
    q, r = np.linalg.qr(rng.standard_normal((n_features, n_features)))
    q *= np.sign(np.diag(r))  # Haar-distributed rotation
    X = Z @ q.T + noise * rng.standard_normal((n_samples, n_features))
    classes = np.asarray([str(i) for i in range(n_moons)])
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
