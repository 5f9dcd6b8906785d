"""Autoencoders for learned features (PyTorch, CPU): a fully connected (variational) autoencoder
whose encoder mean is the embedding, as in Calder, Cook, Thorpe & Slepcev (ICML 2020), section 5:
784-400-20 (MNIST) and 784-400-30 (Fashion-MNIST), a mirrored decoder, 100 epochs.

Every random draw (the weights' start, the batches' order, the VAE's sampling) comes from one
torch.Generator seeded by ``random_state``: the global RNGs of torch and numpy are not touched,
and the same seed and thread count give the same embedding, bit for bit, on one machine.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

EXTRA = "learned"  # the optional dependency group that installs PyTorch


def torch_missing(step: str) -> str | None:
    """What to do when PyTorch is not installed (None: it is); looked up without importing it."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        return None
    return (f"{step} trains a network with PyTorch, which is not installed: pip install "
            f"'gssl[{EXTRA}]' (in a checkout: pip install -e '.[{EXTRA}]')")


def import_torch():
    """torch, or a ConfigError naming the extra that installs it."""
    from ..errors import ConfigError

    try:
        import torch
    except ImportError:
        raise ConfigError(torch_missing("a learned-feature step")) from None
    return torch


@dataclass
class TrainedAutoencoder:
    embedding: np.ndarray                     # (n, latent) float64: the encoder's mean
    weights: dict[str, np.ndarray]            # the network's parameters by name
    losses: list[float] = field(default_factory=list)  # mean loss per point, one per epoch


@contextlib.contextmanager
def _torch_threads(torch, threads: int | None):
    old = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _layers(torch, sizes, generator):
    """Linear layers between consecutive sizes, initialised as torch's default (Kaiming uniform
    weights, uniform biases) but from ``generator``."""
    out = torch.nn.ModuleList()
    for a, b in zip(sizes[:-1], sizes[1:]):
        lin = torch.nn.utils.skip_init(torch.nn.Linear, a, b, dtype=torch.float32)
        bound = 1.0 / math.sqrt(a)
        with torch.no_grad():
            lin.weight.uniform_(-bound, bound, generator=generator)
            lin.bias.uniform_(-bound, bound, generator=generator)
        out.append(lin)
    return out


def _network(torch, n_features, hidden, latent, variational, generator):
    nn = torch.nn

    class Autoencoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = _layers(torch, [n_features, *hidden], generator)
            self.mean = _layers(torch, [hidden[-1] if hidden else n_features, latent], generator)[0]
            self.logvar = (_layers(torch, [hidden[-1] if hidden else n_features, latent], generator)[0]
                           if variational else None)
            self.decoder = _layers(torch, [latent, *hidden[::-1], n_features], generator)

        def encode(self, x):
            for lin in self.encoder:
                x = torch.relu(lin(x))
            return self.mean(x), (self.logvar(x) if self.logvar is not None else None)

        def decode(self, z):
            for lin in self.decoder[:-1]:
                z = torch.relu(lin(z))
            return self.decoder[-1](z)  # logits (bce) or values (mse)

    return Autoencoder()


def train_autoencoder(X: np.ndarray, *, hidden=(400,), latent=20, variational=True,
                      reconstruction="bce", epochs=100, batch_size=128, learning_rate=1e-3,
                      random_state=0, threads=None,
                      progress: Callable[[int, float], None] | None = None) -> TrainedAutoencoder:
    """Train by Adam on minibatches (reshuffled every epoch) and return the encoder's mean of
    every row of X. ``reconstruction``: "bce" (a Bernoulli decoder, X in [0, 1], as Calder et
    al.) or "mse" (a Gaussian one); ``variational`` adds the sampling step and the KL term (a
    VAE), else a plain autoencoder. ``progress(epoch, mean loss)`` is called after each epoch."""
    torch = import_torch()
    g = torch.Generator().manual_seed(int(random_state))
    with _torch_threads(torch, threads):
        data = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32))
        net = _network(torch, data.shape[1], tuple(hidden), int(latent), variational, g)
        opt = torch.optim.Adam(net.parameters(), lr=learning_rate)
        bce = reconstruction == "bce"
        losses = []
        for epoch in range(int(epochs)):
            order = torch.randperm(data.shape[0], generator=g)
            total = 0.0
            for start in range(0, data.shape[0], int(batch_size)):
                x = data[order[start:start + batch_size]]
                mu, logvar = net.encode(x)
                z = mu if logvar is None else mu + torch.randn(mu.shape, generator=g) * torch.exp(0.5 * logvar)
                out = net.decode(z)
                loss = (torch.nn.functional.binary_cross_entropy_with_logits(out, x, reduction="sum") if bce
                        else 0.5 * torch.sum((out - x) ** 2))
                if logvar is not None:  # KL(q(z|x) || N(0, I))
                    loss = loss - 0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp())
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach())
            losses.append(total / data.shape[0])
            if progress is not None:
                progress(epoch + 1, losses[-1])
        with torch.no_grad():
            embedding = torch.cat([net.encode(data[i:i + 8192])[0]
                                   for i in range(0, data.shape[0], 8192)]).double().numpy()
        weights = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    return TrainedAutoencoder(embedding=embedding, weights=weights, losses=losses)
