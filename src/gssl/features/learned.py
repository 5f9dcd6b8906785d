"""Learned representations: a (variational) autoencoder trained on the features, its encoder's
mean the new features (Calder, Cook, Thorpe & Slepcev, ICML 2020, section 5: 784-400-20 on MNIST,
784-400-30 on Fashion-MNIST, 100 epochs). PyTorch (CPU) is the optional extra ``learned``;
without it a chain naming these steps is refused at config check. The network's weights and the
loss per epoch are kept in the features file beside the embedding (``artifacts``)."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError
from .autoencoder_nn import torch_missing
from .step import Param, Shape, Step, register

_POSITIVE = {"type": "integer", "minimum": 1}
log = logging.getLogger(__name__)


class _Autoencoder(Step):
    variational: bool
    code_modules = ("gssl.features.autoencoder_nn",)
    keeps_artifacts = True
    params = {
        "hidden": Param("Hidden layer widths of the encoder (the decoder mirrors them).",
                        {"type": "array", "items": _POSITIVE, "minItems": 1}, [400]),
        "latent": Param("Width of the embedding (the encoder's mean).", _POSITIVE, 20),
        "epochs": Param("Passes over the data.", _POSITIVE, 100),
        "batch_size": Param("Points per Adam step.", _POSITIVE, 128),
        "learning_rate": Param("Adam's step size.", {"type": "number", "exclusiveMinimum": 0}, 1e-3),
        "seed": Param("Seed of the weights' start, the batches and the sampling (default: the "
                      "config's seed).", {"type": "integer", "minimum": 0}),
        "reconstruction": Param("bce: a Bernoulli decoder for features in [0, 1] (Calder et al.); "
                                "mse: a Gaussian one, for any features.", {"enum": ["bce", "mse"]}, "bce"),
        "input_scale": Param("global_max: divide the features by their largest value first (pixels "
                             "0..255 to [0, 1], as Calder et al.); none: as they are.",
                             {"enum": ["global_max", "none"]}, "global_max"),
    }

    def check(self):
        hidden = self.p.get("hidden", [400])
        if not (isinstance(hidden, list) and hidden
                and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hidden)):
            return f"hidden must be a list of positive integers, got {hidden!r}"
        return super().check() or torch_missing(self.name)

    def output(self, shape: Shape) -> Shape:
        return Shape(shape.n, int(self.get("latent")), False, shape.n_exact)

    def _inputs(self, X) -> np.ndarray:
        if sp.issparse(X):
            warnings.warn(f"{self.name} densifies sparse features", UserWarning, stacklevel=4)
            X = X.toarray()
        X = np.asarray(X, dtype=np.float32)
        if self.get("input_scale") == "global_max":
            top = float(X.max(initial=0.0))
            X = X / top if top > 0 else X
        if self.get("reconstruction") == "bce" and X.size and (X.min() < 0 or X.max() > 1):
            raise ConfigError(f"{self.name} with reconstruction: bce needs features in [0, 1], these "
                              f"span [{X.min():.3g}, {X.max():.3g}]: use input_scale: global_max on "
                              f"non-negative features, put minmax before it, or use reconstruction: mse")
        return X

    def apply(self, X, seed):
        from .autoencoder_nn import train_autoencoder

        def progress(epoch, loss):
            log.info("%s epoch %d/%d: loss %.4f", self.name, epoch, self.get("epochs"), loss)

        seed = self.p.get("seed", seed)
        trained = train_autoencoder(
            self._inputs(X), hidden=tuple(self.get("hidden")), latent=self.get("latent"),
            variational=self.variational, reconstruction=self.get("reconstruction"),
            epochs=self.get("epochs"), batch_size=self.get("batch_size"),
            learning_rate=self.get("learning_rate"), random_state=seed, progress=progress)
        self.artifacts = {"losses": np.asarray(trained.losses),
                          **{f"weights.{k}": v for k, v in trained.weights.items()}}
        return trained.embedding


@register
class VAE(_Autoencoder):
    name = "vae"
    description = ("A variational autoencoder trained on the features (PyTorch, the `learned` "
                   "extra); the encoder's mean is the embedding. Defaults: Calder et al. 2020's "
                   "784-400-20 network, 100 epochs.")
    variational = True


@register
class Autoencoder(_Autoencoder):
    name = "autoencoder"
    description = ("A plain autoencoder trained on the features (PyTorch, the `learned` extra); "
                   "the encoder's output is the embedding.")
    variational = False
