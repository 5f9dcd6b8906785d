"""The splits cache file: the roles of a protocol's splits, with what re-draws them (the protocol,
the dataset and protocol names the seeds come from), checked against a fresh draw on load."""

from __future__ import annotations

import numpy as np

from ..errors import CacheError, ConfigError, SplitError
from ..store.h5io import read_h5, write_h5
from .protocols import ROLE_NAMES, make_splits, n_splits, seed_for, with_test_part

SEED_RULE = "seed_for(dataset, protocol_id, split): sha256 of canonical JSON [dataset, protocol_id, split]"


def save_splits(path, roles: np.ndarray, params: dict, inputs: dict | None = None,
                build_seconds: float | None = None, test_from: int | None = None) -> None:
    """``params``: ``protocol`` (its spec), ``dataset`` and ``protocol_id``, the names the splits'
    seeds are drawn from (:func:`seed_for`; the rule is recorded as attribute ``seeds``, split 0's
    seed as ``seed_0``): with ``test_from``, the first row of the dataset's test file (attribute
    ``test_from``: the protocol ran :func:`with_test_part`), all :func:`check_rederived` needs to
    draw them again."""
    extra = {"seeds": SEED_RULE}
    if {"dataset", "protocol_id"} <= set(params):
        extra["seed_0"] = str(seed_for(params["dataset"], params["protocol_id"], 0))
    if test_from is not None:
        extra["test_from"] = int(test_from)
    write_h5(path, "splits", {"roles": np.asarray(roles, dtype=np.int8)}, params, inputs,
             build_seconds=build_seconds, extra_attrs=extra)


def check_rederived(path, roles: np.ndarray, y, params: dict, rule: str | None = "splits",
                    only=None, test_from: int | None = None) -> None:
    """Draw the splits of ``path`` again from the labels ``y`` and the protocol, dataset and
    protocol id its ``params`` record (on a dataset with a test file from row ``test_from``, its
    attribute, as :func:`with_test_part` runs it), and refuse the file (CacheError naming it and
    the first split and point that differ) unless they are its ``roles``: a split edited with its
    checksum recomputed (labeled and unlabeled roles swapped, say) is not one the protocol draws.
    ``only``: the split indices to check (a job's block; default every split)."""
    from ..store.lineage import rebuild_hint

    if only is not None:
        only = [s for s in only if 0 <= s < roles.shape[0]]  # out of range: the job names it
    try:
        spec = with_test_part(params["protocol"], test_from, params["dataset"], params["protocol_id"])
        want = make_splits(y, spec, params["dataset"], params["protocol_id"], only)
    except (KeyError, TypeError) as exc:
        raise CacheError(f"{path}: its params do not say how its splits were drawn ({exc!r}): "
                         f"{rebuild_hint(path, rule)}") from None
    except (ConfigError, SplitError) as exc:
        raise CacheError(f"{path}: its protocol cannot be drawn on these labels ({exc}): "
                         f"{rebuild_hint(path, rule)}") from None
    if only is not None and roles.shape[0] == n_splits(params["protocol"]):
        index = np.asarray(only, dtype=np.int64)
        roles = roles[index]
    else:
        index = np.arange(want.shape[0])
    if want.shape == roles.shape and np.array_equal(want, roles):
        return
    if want.shape != roles.shape:
        what = (f"{roles.shape[0]} splits of {roles.shape[1]} points, the protocol draws "
                f"{n_splits(params['protocol'])} of {want.shape[1]}")
    else:
        k, i = np.argwhere(want != roles)[0]
        s = int(index[k])
        what = (f"split {s}, point {i}: {ROLE_NAMES.get(int(roles[k, i]), roles[k, i])}, the protocol "
                f"draws {ROLE_NAMES.get(int(want[k, i]), want[k, i])}; "
                f"{int((want != roles).any(axis=1).sum())} of {want.shape[0]} splits checked differ")
    raise CacheError(f"{path}: its splits are not those protocol {params['protocol_id']!r} draws on "
                     f"dataset {params['dataset']!r} ({what}): the file was edited or belongs elsewhere: "
                     f"{rebuild_hint(path, rule)}")


def load_splits(path, expect_params: dict | None = None, rule: str | None = None) -> np.ndarray:
    arrays, _ = read_h5(path, "splits", expect_params=expect_params, required=("roles",), rule=rule)
    roles = arrays["roles"]
    if roles.ndim != 2 or roles.dtype != np.int8:
        raise CacheError(f"{path}: 'roles' must be an int8 (n_splits, n) array, got {roles.dtype} "
                         f"{roles.shape}; delete it and rerun the splits rule")
    return roles
