"""Registry of datasets: name -> files (with sources and sha256), parser or generator, and fingerprint.

Sources of a file, in the order they are tried: the mirror (``GSSL_DATA_MIRROR``: a folder laid out as
``<folder>/<file>`` or an http(s) base URL), then the public URLs below: the GitHub raw URL pinned
to the commit recorded in the mirror's PROVENANCE.md (byte-identical to the mirror), then the
original host where one exists (checked by sha256 like any other source; a host that serves other
bytes is reported and skipped).

``fingerprint`` is ``array_fingerprint(X, y, W)`` of the parsed canonical arrays, computed once
from the mirror files; :func:`gssl.datasets.load` refuses data that does not reproduce it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import ConfigError
from . import parsers, synthetic

_GH = "https://raw.githubusercontent.com"
_STAR_SVM = f"{_GH}/edche/star_svm/c96d22fd79e28287ed8b400b00d6251214cdf3e9/data"
_DMALLON = f"{_GH}/dmallon/net/aa7addb57ea2c164ec1bcd1c166cb769773c76b2/data"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_FASHION_GH = f"{_GH}/zalandoresearch/fashion-mnist/949006594cc2f804a93b9155849734564c3545ec/data/fashion"
_FASHION_S3 = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com"
_KELAS = f"{_GH}/kelas/mnist/283b387221ab46655e600cfcc25d843bb14292b9"
_CAI = "http://www.cad.zju.edu.cn/home/dengcai/Data"


@dataclass(frozen=True)
class FileSpec:
    """One served file: its name in raw_dir, sha256 and size of the served bytes, public URLs."""

    name: str
    sha256: str
    size: int
    urls: tuple[str, ...] = ()


@dataclass(frozen=True)
class DatasetSpec:
    """How to obtain one dataset.

    kind: "mirror" (files fetched then parsed), "bundled" (scikit-learn), "generator" or "plugin"
    (a lab's loader registered under the ``gssl.datasets`` entry-point group); the last three are
    made by code, with nothing to download: :attr:`generated`.
    graph_only: the dataset is a weight matrix W without features X (its graphs take kind
    precomputed and its preprocessing is empty).
    folder: the dataset's folder in the mirror. loader: parser(paths) for mirror datasets, else a
    function of ``defaults``' keys (+ random_state for generators). n_samples/n_features/n_classes
    document the canonical shape (generators: with default parameters). classes: the class names
    the parser gives (mirror datasets; see :meth:`class_names`). sparse: False for dense features,
    None where the parser keeps what the file stores (dense or CSR).
    """

    name: str
    kind: str
    description: str
    loader: Callable
    folder: str | None = None
    files: tuple[FileSpec, ...] = ()
    fingerprint: str | None = None
    defaults: dict = field(default_factory=dict)
    n_samples: int | None = None
    n_features: int | None = None
    n_classes: int | None = None
    graph_only: bool = False
    classes: tuple[str, ...] | None = None
    sparse: bool | None = False

    def class_names(self) -> list[str] | None:
        """The class names the loader gives, known without loading: the generators' and the bundled
        digits' "0".."C-1", a mirror parser's convention; None where unknown (a plugin)."""
        c = self.n_classes
        if self.kind in ("generator", "bundled"):
            return [str(i) for i in range(c)] if c else None
        if self.kind != "mirror" or not c or self.classes is None or len(self.classes) != c:
            return None
        return list(self.classes)

    def generator_params(self, params: dict | None, random_state) -> dict:
        """The loader's keyword arguments: defaults overridden by ``params`` (and random_state for a
        generator, 0 if None); unknown keys are a ConfigError naming the allowed ones."""
        import inspect

        params = dict(params or {})
        allowed = set(inspect.signature(self.loader).parameters)
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise ConfigError(f"dataset {self.name!r}: unknown params {unknown}; allowed: {sorted(allowed)}")
        if self.kind == "generator" or (self.kind == "plugin" and "random_state" in allowed):
            params.setdefault("random_state", 0 if random_state is None else random_state)
        return {**self.defaults, **params}

    @property
    def generated(self) -> bool:
        """Made by gssl code (bundled or generated): nothing to download, and its content depends
        on the generators' source."""
        return self.kind in GENERATED_KINDS


GENERATED_KINDS = ("bundled", "generator", "plugin")
FILE_SOURCE = "file"  # source: file -- a researcher's own data file (gssl.datasets.files)
ENTRY_POINT_GROUP = "gssl.datasets"


def _mirror(name, folder, description, loader, files, fingerprint, shape, n_classes,
            graph_only=False) -> DatasetSpec:
    return DatasetSpec(name, "mirror", description, loader, folder, tuple(files), fingerprint,
                       n_samples=shape[0], n_features=shape[1], n_classes=n_classes,
                       graph_only=graph_only, classes=parsers.class_names(loader, n_classes),
                       sparse=None if parsers.may_be_sparse(loader) else False)


_SPECS = [
    DatasetSpec("digits", "bundled", "scikit-learn's bundled 8x8 digits (UCI optdigits test set)",
                synthetic.digits,
                fingerprint="68c36a09bab176c95790eef09fc39d20586a958496fd39299602c1e9f5504db0",
                n_samples=1797, n_features=64, n_classes=10),
    DatasetSpec("g50c", "generator", "two unit-covariance Gaussians in 50-D, equal priors, Bayes error 5%",
                synthetic.g50c, defaults={"n_samples": 550, "n_features": 50, "bayes_error": 0.05},
                n_samples=550, n_features=50, n_classes=2),
    DatasetSpec("two_moons", "generator", "two moons rotated into high dimension with Gaussian noise",
                synthetic.two_moons, defaults={"n_samples": 1000, "n_features": 100, "noise": 0.15},
                n_samples=1000, n_features=100, n_classes=2),
    DatasetSpec("four_moons", "generator", "four half-moons rotated into high dimension with Gaussian noise",
                synthetic.four_moons, defaults={"n_samples": 4000, "n_features": 100, "noise": 0.15},
                n_samples=4000, n_features=100, n_classes=4),
    _mirror("usps", "usps", "USPS 16x16, 7291 train + 2007 test (usps.h5; pixels in [0,1]; meta n_train)",
            parsers.parse_usps_h5,
            [FileSpec("usps.h5", "734f88c541104a956d88be2c95d03b4a463ffd74ccc2ba9c80841fb98e3fcb36", 2913522,
                      (f"{_GH}/niuers/Learning-From-Data-A-Short-Course/"
                       "35684e893b63bf4039bafcc6d34fe935851baf9a/data/usps.h5",))],
            "06bd24cd95b8f08121441d5ebf8a670fbc4f63d36cac03d7c8e49f0092467cb0", (9298, 256), 10),
    _mirror("uspst", "uspst", "Sindhwani's USPST (2007x256, pixels in [-0.9375, 0.9375])", parsers.parse_sindhwani,
            [FileSpec("uspst.mat", "53577dbe246b303b07e5a03bcd7ea93582c8c2bbfac1508040f829d24c4a4918", 4152856,
                      (f"{_STAR_SVM}/uspst.mat",))],
            "0b498259a794fb40d36dd3aa2b585ed434ecf218c8c441a061da382db2cf0234", (2007, 256), 10),
    _mirror("g50c_sindhwani", "g50c", "Sindhwani's G50C file (550x50, labels -1/+1)", parsers.parse_sindhwani,
            [FileSpec("g50c.mat", "9f0d95cb5884d817c1165861b347a428bcc255566d1e74c871bd0de58b23423f", 232472,
                      (f"{_STAR_SVM}/g50c.mat",
                       f"{_GH}/dancoombs/s3vm-sgd/3bfb6747be357718693c759a480f744a653c6468/data/g50c.mat"))],
            "37868e81a3c0568c6daa01dfd65ecb3b21e9f46018f43468f741bc095e7ca5e9", (550, 50), 2),
    _mirror("pcmac", "pcmac", "PCMAC text (1946x7511 sparse CSR, rows L2-normalised, labels -1/+1)",
            parsers.parse_sindhwani,
            [FileSpec("text1.mat", "2254d508519ae589afd132a3d00cd6b6de0d29caacc00168daa9fa1984618c09", 1772784,
                      (f"{_STAR_SVM}/text1.mat",))],
            "4c7e09bae9270800a7959a50b057190e20b27f63efd6f4e3023366ace69f3973", (1946, 7511), 2),
    _mirror("coil20", "coil20", "COIL-20, Deng Cai's 32x32 (1440x1024 in [0,1], column-major pixels)",
            parsers.parse_cai,
            [FileSpec("COIL20.mat", "2a35c105dbb327492b90389e55612bcbf39187bc7c408252239903e4ce7d6958", 3022227,
                      (f"{_GH}/panji530/Deep-subspace-clustering-networks/"
                       "95e26f7dde6dc3818ca797c874252831761494b3/Data/COIL20.mat",
                       f"{_CAI}/COIL20/COIL20.mat"))],
            "85de692c1e898b98419ae013b0821c5d1100196ae005a6a5b59bccd8844dda2b", (1440, 1024), 20),
    _mirror("optdigits", "optdigits", "UCI optdigits, tra (3823) + tes (1797) = 5620x64 (meta n_train)",
            parsers.parse_uci_csv,
            [FileSpec("optdigits.tra", "e1b683cc211604fe8fd8c4417e6a69f31380e0c61d4af22e93cc21e9257ffedd", 563639,
                      (f"{_DMALLON}/optdigits.tra", f"{_UCI}/optdigits/optdigits.tra")),
             FileSpec("optdigits.tes", "6ebb3d2fee246a4e99363262ddf8a00a3c41bee6014c373ed9d9216ba7f651b8", 264712,
                      (f"{_DMALLON}/optdigits.tes", f"{_UCI}/optdigits/optdigits.tes"))],
            "10e3c94d9cdc6d9794adddcd66c31ab3b1f03257d264dc61579f5a77b6a79d16", (5620, 64), 10),
    _mirror("pendigits", "pendigits", "UCI pendigits, tra (7494) + tes (3498) = 10992x16 (meta n_train)",
            parsers.parse_uci_csv,
            [FileSpec("pendigits.tra", "e2b9eb9f0d0467e2b64a4816a3420edf2b8043447576f4b84337aba44a9f97d3", 502098,
                      (f"{_DMALLON}/pendigits.tra", f"{_UCI}/pendigits/pendigits.tra")),
             FileSpec("pendigits.tes", "8bd03229c5c5291fefe43e45465dd948d2645bf23328b9d993e0b777666b2015", 234366,
                      (f"{_DMALLON}/pendigits.tes", f"{_UCI}/pendigits/pendigits.tes"))],
            "25dcc68fe54aff15cb739ba1209045aaef7ad785768a5be5bcc5425b27e83831", (10992, 16), 10),
    _mirror("mnist_test", "mnist_test", "MNIST test set only (10000x784 float32, pixels 0..255)",
            parsers.parse_mnist_test,
            [FileSpec("t10k-images-idx3-ubyte.gz",
                      "167310007f03058885c7e95e6c0b19c20de5c7fd3031f4cbdadc9014a523d80b", 1648877,
                      (f"{_KELAS}/t10k-images-idx3-ubyte.gz",)),
             FileSpec("t10k-labels-idx1-ubyte.gz",
                      "fc607395669ec21321ea83e4b82c0544b7e8e63ff5b34337c06bc0a17cc0da3c", 4542,
                      (f"{_KELAS}/t10k-labels-idx1-ubyte.gz",))],
            "2cb2ee1eb57642b0692175631b8fd2df177a279140bf6f4ce2c9003173d27650", (10000, 784), 10),
    _mirror("fashion_mnist", "fashion_mnist",
            "Fashion-MNIST train (60000) + test (10000) = 70000x784 float32, pixels 0..255 (meta n_train)",
            parsers.parse_fashion_mnist,
            [FileSpec(f, sha, size, (f"{_FASHION_GH}/{f}", f"{_FASHION_S3}/{f}")) for f, sha, size in [
                ("train-images-idx3-ubyte.gz",
                 "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7", 26421856),
                ("train-labels-idx1-ubyte.gz",
                 "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056", 29491),
                ("t10k-images-idx3-ubyte.gz",
                 "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa", 4422079),
                ("t10k-labels-idx1-ubyte.gz",
                 "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05", 5125)]],
            "429a0e5c63c306d55d1bad4861ee81b7d4d0ae3434f6a95444248912fbd794f0", (70000, 784), 10),
    _mirror("yaleb32", "yaleb", "Extended YaleB, Deng Cai's 32x32 (2414x1024, pixels 0..255, column-major)",
            parsers.parse_cai,
            [FileSpec("YaleB_32x32_ori.mat", "3fbbda4eb781b9bb28025189677b6727706e114eb0215bbfd718f1f4fcb54b99",
                      2214688,
                      (f"{_GH}/tansyab1/CNN-Sparse/f0adaee21e3c1f85fa9f9c5a97ebb49148f6c7f2/data/YaleB_32x32_ori.mat",
                       f"{_CAI}/YaleB/YaleB_32x32.mat"))],
            "ac1478daf3dbf26cf81b630d738b41b972cae5749174298711f6aeabaf8bf5d3", (2414, 1024), 38),
    _mirror("20news", "20news_graph", "20 Newsgroups NMFR/MTV kNN graph (graph only: W 19934x19934 binary, no X)",
            parsers.parse_graph_mat,
            [FileSpec("20NEWS.mat", "f8612e6050514cf1588de9334845755734d41149a89ac5d3a2c1ae90b729862c", 319934,
                      (f"{_GH}/xbresson/pcut/7d0709a4c43bea22510dd4b86c954be966b460b9/datasets/20NEWS.mat",))],
            "9ceb3e1f2c35d695d1c8093cfc27bb45f145357f812f6ff74ea76509e9aec8c2", (19934, None), 20,
            graph_only=True),
]

REGISTRY: dict[str, DatasetSpec] = {s.name: s for s in _SPECS}


def plugin_datasets() -> dict[str, DatasetSpec]:
    """Loaders installed packages register under the ``gssl.datasets`` entry-point group: a
    function of its params (and ``random_state`` if it takes one) returning ``(X, y)``,
    ``(X, y, W)`` or a dict with keys X, y and optionally W (X None for graph-only data); labels
    as in a data file (numbers or strings, None/NaN/"" for a point without a label)."""
    from importlib.metadata import entry_points

    specs = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in REGISTRY or ep.name == FILE_SOURCE:
            continue  # gssl's own names win; `gssl datasets list` shows what each name means
        specs[ep.name] = DatasetSpec(ep.name, "plugin", f"plugin {ep.value}", _plugin_loader(ep))
    return specs


def _plugin_loader(ep):
    """The entry point's function, loaded on first call, returning a canonical Dataset."""
    import functools
    import inspect

    def load_plugin(**kwargs):
        fn = ep.load()
        return as_dataset(fn(**kwargs), f"dataset plugin {ep.name!r} ({ep.value})")

    try:
        fn = ep.load()
    except Exception as exc:  # any import failure of a third-party module: reported by name
        raise ConfigError(f"dataset plugin {ep.name!r} ({ep.value}) cannot be imported: "
                          f"{type(exc).__name__}: {exc}") from exc
    load_plugin = functools.wraps(fn)(load_plugin)
    load_plugin.__signature__ = inspect.signature(fn)
    return load_plugin


def as_dataset(out, where: str):
    """A loader's ``(X, y)``, ``(X, y, W)`` or ``{X, y, W}`` as a canonical Dataset."""
    from .dataset import Dataset
    from .file_readers import check_features, check_weights
    from .labels import encode_labels

    if isinstance(out, Dataset):
        return out
    if isinstance(out, dict):
        X, y, W = out.get("X"), out.get("y"), out.get("W")
    elif isinstance(out, tuple) and len(out) in (2, 3):
        X, y, W = (*out, None)[:3]
    else:
        raise ConfigError(f"{where} returned {type(out).__name__}; return (X, y), (X, y, W) or a "
                          f"dict with keys X, y and optionally W")
    if y is None or (X is None and W is None):
        raise ConfigError(f"{where}: needs labels y and features X or a weight matrix W")
    y, classes = encode_labels(y, where)
    X = None if X is None else check_features(X, where)
    W = None if W is None else check_weights(W, where)
    for what, m in (("X", X), ("W", W)):
        if m is not None and m.shape[0] != y.size:
            raise ConfigError(f"{where}: {what} has {m.shape[0]} rows but y has {y.size} labels")
    return Dataset("", X, y, classes, W=W, meta={"source": "plugin"})


def list_datasets() -> list[str]:
    """Names of every registered dataset (gssl's and installed plugins'), sorted."""
    return sorted({*REGISTRY, *plugin_datasets()})


def all_specs() -> dict[str, DatasetSpec]:
    return {**plugin_datasets(), **REGISTRY}


def generated_datasets() -> frozenset[str]:
    """Names of the datasets made by code (bundled, generated, plugins: no download)."""
    return frozenset(name for name, spec in all_specs().items() if spec.generated)


def graph_only_datasets() -> frozenset[str]:
    """Names of the registered datasets that are a weight matrix without features."""
    return frozenset(name for name, spec in REGISTRY.items() if spec.graph_only)


def get_spec(name: str) -> DatasetSpec:
    """The spec of ``name``; ConfigError listing the known names if there is none."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        pass
    plugins = plugin_datasets() if isinstance(name, str) else {}
    if name in plugins:
        return plugins[name]
    raise ConfigError(f"unknown dataset {name!r}; known datasets: {', '.join(list_datasets())} "
                      f"(or source: {FILE_SOURCE} with path: for a data file of your own)")
