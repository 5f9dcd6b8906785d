"""The data preflight: what a dataset, features or graph job would refuse, found before any job
from what is known then: a data file's contents, the dataset registry's sizes, class names and
generator parameters, the preprocessing steps' output shapes. Each message is the job's own (the
same function raises it, or the same text), after where it comes from; a check that needs what
only a job knows (a plugin's data, the class sizes of a view of downloaded data) is skipped."""

from __future__ import annotations

from ..errors import ConfigError


def preflight_problems(config: dict, planning_cache=None) -> list[str]:
    """What the data files hold that a job would refuse; where they hold nothing such, the sizes,
    classes and feature counts known before any job that a job would refuse. ``planning_cache``:
    a folder where what a data file holds is kept for the next process while the file is
    unchanged (:mod:`gssl.datasets.file_facts`; the workflow's is under the results folder)."""
    return (_data_file_problems(config, planning_cache)
            or _known_shape_problems(config, planning_cache))


def _data_file_problems(config: dict, planning_cache=None) -> list[str]:
    """What the jobs would find in a ``source: file`` dataset, found before any job: the file
    (missing, ragged, non-numeric or non-finite features, one class, duplicated ids), its class
    view, and whether each protocol an experiment runs on it can draw its splits."""
    from ..datasets import FILE_SOURCE, select
    from ..datasets.views import class_view
    from ..errors import DatasetError, SplitError
    from ..splits import with_test_part
    from .split_check import check_draws

    problems = []
    for did, entry in config["datasets"].items():
        if entry["source"] != FILE_SOURCE:
            continue
        try:
            ds = _file_labels(entry, did, planning_cache)
            view = class_view(entry)
            ds = select(ds, **view) if view else ds
        except (ConfigError, DatasetError) as exc:
            problems.append(f"datasets.{did}: {exc}")
            continue
        for exp, e in config["experiments"].items():
            if did not in e["datasets"]:
                continue
            for pid in e["protocols"]:
                try:
                    spec = with_test_part(config["protocols"][pid], ds.meta.get("test_from"), did, pid)
                    check_draws(ds.y, spec, did, pid, planning_cache)  # kept while the labels are the same
                except (ConfigError, SplitError) as exc:
                    problems.append(f"experiment '{exp}': protocol '{pid}' on dataset '{did}' "
                                    f"({entry['path']}): {exc}{_short_class_hint(exc, ds, did)}")
    return problems


def _short_class_hint(exc, ds, did: str) -> str:
    """The short classes by name, and the config key that drops them."""
    short = getattr(exc, "short_classes", None)
    if short is None or not len(short):
        return ""
    names = [str(ds.classes[int(c)]) for c in short]
    kept = [str(c) for c in ds.classes if str(c) not in names]
    drop = (f"; to drop them, give datasets.{did} classes: [{', '.join(kept)}]"
            if len(kept) >= 2 else "")
    return f". Class {short[0]} is {names[0]!r} (short: {', '.join(names)}){drop}"


class _Facts:
    """What is known of a dataset (after its class view) before its job runs."""

    def __init__(self, n=None, n_exact=True, d=None, sparse=False, counts=None, n_classes=None,
                 n_labeled=None):
        self.n, self.n_exact, self.d, self.sparse = n, n_exact, d, sparse
        self.counts = counts  # points per class (a generator's, after the view), where known
        # classes and points with a label, where known (an active protocol's unlabeled pool)
        self.n_classes, self.n_labeled = n_classes, n_labeled


def _registry_facts(did: str, entry: dict) -> _Facts | None:
    """A registered dataset's size, features and classes after its view; ConfigError (the job's
    message) for generator params the job refuses, an unknown class name, a class index out of
    range or overlapping groups. None where too little is known (a plugin)."""
    import numpy as np

    from ..datasets import get_spec, select
    from ..datasets.dataset import Dataset
    from ..datasets.synthetic import check_params
    from ..datasets.views import class_view

    spec = get_spec(entry["source"])
    if spec.kind == "plugin":
        return None
    params = entry.get("params")
    if spec.kind == "mirror":
        if params:
            raise ConfigError(f"dataset {spec.name!r} is read from files and takes no params, got {params}")
        n, d = spec.n_samples, spec.n_features
        counts = None
    else:
        kwargs = check_params(spec.name, spec.generator_params(params, None))
        n, d = kwargs.get("n_samples", spec.n_samples), kwargs.get("n_features", spec.n_features)
        c = spec.n_classes
        counts = [len(range(i, n, c)) for i in range(c)] if spec.kind == "generator" else None
    facts = _Facts(n, True, None if spec.graph_only else d, spec.sparse, counts)
    view = class_view(entry)
    if not view:
        if spec.kind in ("mirror", "bundled"):  # a generator's params may change its classes
            facts.n_classes, facts.n_labeled = spec.n_classes, n
        return facts
    names = spec.class_names()
    if names is None:
        facts.n_exact = False
        return facts
    stub = Dataset(spec.name, None, np.arange(len(names)), np.asarray(names))  # one point per class
    kept = select(stub, **view).meta["view"]  # the job's own checks and messages
    flat = kept.get("classes") or [c for g in kept.get("groups", []) for c in g]
    if counts is None:
        facts.n_exact = False  # at most the parent's size
    else:
        facts.n = sum(counts[c] for c in flat)
        facts.counts = ([counts[c] for c in kept["classes"]] if kept.get("classes")
                        else [sum(counts[c] for c in g) for g in kept["groups"]])
    return facts


# a generated dataset's class sizes are checked against the protocols up to this many points (the
# check draws one split on labels of that size; a larger one has thousands of points per class)
_SPLIT_CHECK_MAX_POINTS = 10_000_000


def _generator_split_problem(did: str, entry: dict, counts: list, pid: str, spec: dict) -> str | None:
    """What the splits job would refuse for a generator's class sizes: a protocol asking more
    points of a class than it has (its message, and the parameter that gives more). A protocol
    with test_from (which depends on the generated order) or a dataset above
    :data:`_SPLIT_CHECK_MAX_POINTS` is left to the job."""
    import numpy as np

    from ..errors import SplitError
    from ..splits import make_splits

    if spec.get("test_from") is not None or sum(counts) > _SPLIT_CHECK_MAX_POINTS:
        return None
    one = {**spec, **{k: 1 for k in ("repeats", "randomizations") if k in spec}}  # one draw: the sizes decide
    y = np.repeat(np.arange(len(counts)), counts)
    try:
        make_splits(y, one, did, pid)
    except (ConfigError, SplitError) as exc:
        n = (entry.get("params") or {}).get("n_samples")
        more = (f"; or raise datasets.{did}.params.n_samples (now {n}: {min(counts)} to {max(counts)} "
                f"points per class)" if n is not None else
                f"; or give datasets.{did} params: {{n_samples: ...}} (now {sum(counts)} points: "
                f"{min(counts)} to {max(counts)} per class)")
        return f"{exc}{more if isinstance(exc, SplitError) else ''}"
    return None


def _file_facts(did: str, entry: dict, planning_cache=None) -> _Facts | None:
    """A data file's size and features after its view, as read by :func:`_data_file_problems`."""
    from ..datasets import select
    from ..datasets.file_facts import file_facts
    from ..datasets.files import FileSource
    from ..datasets.views import class_view

    try:
        facts = file_facts(FileSource.from_entry(entry, f"dataset {did!r}"), did, planning_cache)
        view = class_view(entry)
        ds = select(facts.dataset(did), **view) if view else facts.dataset(did)
    except Exception:  # noqa: BLE001 - reported by _data_file_problems
        return None
    import numpy as np

    y = np.asarray(ds.y)
    return _Facts(ds.n_samples, True, facts.n_features, facts.sparse,
                  n_classes=int(np.unique(y[y >= 0]).size), n_labeled=int(np.count_nonzero(y >= 0)))


def _graph_problem(spec: dict, n: int, n_exact: bool) -> str | None:
    """What the graph job would refuse for ``n`` points: k (and k_st) >= n (gssl.graphs.check_k)."""
    from ..errors import GraphError
    from ..graphs import check_k, validate_graph_spec

    spec = validate_graph_spec(spec)
    if spec["kind"] not in ("knn", "lle"):
        return None
    keys = (["k_st"] if spec.get("weights") == "self_tuning" else []) + ["k"]
    for key in keys:
        if n_exact:
            try:
                check_k(spec[key], n, key)
            except GraphError as exc:
                return str(exc)
        elif spec[key] >= n:
            return (f"{key}={spec[key]} neighbours requested but the data has at most {n} points "
                    f"(fewer after its class view); the maximum allowed {key} is below {n}")
    return None


def _known_shape_problems(config: dict, planning_cache=None) -> list[str]:
    """k >= n, unknown class names, class indices out of range, overlapping groups, more PCA or
    random-projection components than features, and generator params the generator refuses: each
    found before any job from what the registry, the generators' params and the data files tell,
    with the message the job would give."""
    from ..datasets import FILE_SOURCE
    from ..features import Shape, chain_output

    problems, facts = [], {}
    for did, entry in config["datasets"].items():
        try:
            facts[did] = (_file_facts(did, entry, planning_cache) if entry["source"] == FILE_SOURCE
                          else _registry_facts(did, entry))
        except ConfigError as exc:
            problems.append(f"datasets.{did}: {exc}")
            facts[did] = None
    seen = set()
    for exp, e in config["experiments"].items():
        for did in e["datasets"]:
            base = facts.get(did)
            if base is None or base.n is None:
                continue
            problems += _active_pool_problems(config, exp, e, did, base)
            for prep in e["preprocessing"]:
                try:  # the chain itself, or a step refusing these shapes: the features job's message
                    chain_output(config["preprocessing"][prep],
                                 Shape(base.n, base.d, base.sparse, base.n_exact))
                    found = None
                except ConfigError as exc:
                    found = str(exc)
                if found and (did, prep) not in seen:
                    seen.add((did, prep))
                    problems.append(f"experiment '{exp}': preprocessing '{prep}' on dataset '{did}': {found}")
                if found:
                    continue
                for gid in e["graphs"]:
                    try:
                        found = _graph_problem(config["graphs"][gid], base.n, base.n_exact)
                    except ConfigError as exc:  # the spec itself: the graph job's message
                        found = str(exc)
                    if found and (did, gid) not in seen:
                        seen.add((did, gid))
                        problems.append(f"experiment '{exp}': graph '{gid}' on dataset '{did}': {found}")
            if base.counts is None:
                continue
            for pid in e["protocols"]:
                found = _generator_split_problem(did, config["datasets"][did], base.counts, pid,
                                                 config["protocols"][pid])
                if found and (did, pid) not in seen:
                    seen.add((did, pid))
                    problems.append(f"experiment '{exp}': protocol '{pid}' on dataset '{did}': {found}")
    return problems


def _active_pool_problems(config: dict, exp: str, e: dict, did: str, facts: _Facts) -> list[str]:
    """An active protocol whose budget exceeds the unlabeled pool of the dataset (known sizes)."""
    if facts.n_classes is None or facts.n_labeled is None:
        return []
    from ..active.protocol import pool_problem
    from ..splits import validate_protocol

    out = []
    for pid in e["protocols"]:
        spec = config["protocols"][pid]
        if not spec.get("active"):
            continue
        found = pool_problem(validate_protocol(spec), facts.n_labeled, facts.n_classes)
        if found:
            out.append(f"experiment '{exp}': protocol '{pid}' on dataset '{did}': {found}")
    return out


def _file_labels(entry: dict, did: str, planning_cache=None):
    """A data file's labels and class names as a dataset without features: read once per
    content of the file (:func:`gssl.datasets.file_facts.file_facts`), its problems the read's."""
    from ..datasets.file_facts import file_facts
    from ..datasets.files import FileSource

    return file_facts(FileSource.from_entry(entry, f"dataset {did!r}"), did, planning_cache).dataset(did)
