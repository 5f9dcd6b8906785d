import os

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

from gssl.errors import CacheError
from gssl.store.h5io import atomic_path, describe, read_attrs, read_h5, write_h5
from gssl.store.hashing import array_fingerprint, module_source_hash, params_hash


def test_round_trip_dense_sparse_strings(tmp_path):
    X = np.arange(12.0).reshape(3, 4)
    W = sp.random(5, 5, density=0.4, format="csr", random_state=0)
    names = np.array(["zero", "one"])
    path = tmp_path / "a.h5"
    write_h5(path, "thing", {"X": X, "W": W, "classes": names}, params={"k": 3}, inputs={"up": "abc"})
    arrays, attrs = read_h5(path, "thing", expect_params={"k": 3}, required=("X", "W"))
    np.testing.assert_array_equal(arrays["X"], X)
    assert (arrays["W"] != W).nnz == 0 and sp.isspmatrix_csr(arrays["W"])
    assert list(arrays["classes"]) == ["zero", "one"]
    assert attrs["params"] == {"k": 3} and attrs["inputs"] == {"up": "abc"}
    assert attrs["params_hash"] == params_hash({"k": 3})
    assert "sparse CSR 5x5" in describe(path)


def test_wrong_kind_and_params_are_refused_with_fix(tmp_path):
    path = tmp_path / "a.h5"
    write_h5(path, "graph", {"x": np.zeros(2)}, params={"k": 3})
    with pytest.raises(CacheError, match="expected 'splits'.*rm"):
        read_h5(path, "splits")
    with pytest.raises(CacheError, match="built with params"):
        read_h5(path, "graph", expect_params={"k": 4}, rule="graph")


def test_truncated_and_foreign_files_are_refused(tmp_path):
    good = tmp_path / "good.h5"
    write_h5(good, "graph", {"x": np.random.default_rng(0).random(50_000)}, params={})
    data = good.read_bytes()
    bad = tmp_path / "bad.h5"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(CacheError, match=f"{bad}.*truncated or foreign"):
        read_h5(bad, "graph", rule="graph")
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as fh:
        fh["x"] = np.zeros(3)
    with pytest.raises(CacheError, match="not written by gssl"):
        read_attrs(foreign)
    unfinished = tmp_path / "unfinished.h5"
    with h5py.File(unfinished, "w") as fh:
        fh.attrs["gssl_kind"] = "graph"
    with pytest.raises(CacheError, match="not completely written"):
        read_attrs(unfinished)


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("killed")
    assert not target.exists() and list(tmp_path.iterdir()) == []
    with atomic_path(target) as tmp:
        tmp.write_text("done")
    assert target.read_text() == "done" and len(list(tmp_path.iterdir())) == 1
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # like open(), not mkstemp's 0600


def test_hashes_are_stable_and_sensitive():
    assert params_hash({"a": 1, "b": [1, 2]}) == params_hash({"b": [1, 2], "a": 1})
    assert params_hash({"a": 1}) != params_hash({"a": 2})
    X = np.arange(6.0).reshape(2, 3)
    assert array_fingerprint(X) == array_fingerprint(X.copy())
    assert array_fingerprint(X) != array_fingerprint(X.astype(np.float32))
    assert array_fingerprint(sp.csr_matrix(X)) != array_fingerprint(X)
    h1 = module_source_hash("gssl.store.hashing")
    assert h1 == module_source_hash("gssl.store.hashing") and h1 != module_source_hash("gssl.store.h5io")


def test_import_closure_follows_relative_lazy_and_package_imports(tmp_path, monkeypatch):
    from gssl.store.hashing import import_closure

    mods = import_closure("gssl.solvers.lapsvm")
    # relative imports, submodules named through their package, transitive (rls -> kernels)
    assert {"gssl.solvers.lapsvm", "gssl.solvers.rls", "gssl.solvers.base", "gssl.optim.kernels",
            "gssl.optim.manifold_primal", "gssl.optim.pcg", "gssl.errors"} <= set(mods)
    # narrow: no unrelated solver, no package __init__ that would pull in all of optim
    assert "gssl.solvers.tv" not in mods and "gssl.optim" not in mods
    # a name imported from a package's __init__ that imports it on first use (its _LAZY table,
    # gssl's and gssl.optim's) leads to the module defining it, as the import would
    (tmp_path / "lazy_user.py").write_text("from gssl.optim import lasso_codes\n"
                                           "from gssl.solvers import KernelRLS\n"
                                           "from gssl import make_solver\n")
    monkeypatch.syspath_prepend(tmp_path)
    mods = import_closure("lazy_user")
    assert {"gssl.optim.dictionary_learning", "gssl.solvers.rls",
            "gssl.solvers.registry"} <= set(mods)
    # only the defining module: a package in the closure would hash every file below it
    assert not {"gssl", "gssl.optim", "gssl.solvers", "gssl.optim.tv"} & set(mods)


def _flip_byte(path, dataset, index=0):
    """Flip one byte of a contiguous (uncompressed) dataset inside the HDF5 file."""
    with h5py.File(path, "r") as fh:
        offset = fh[dataset].id.get_offset()
    with open(path, "r+b") as fh:
        fh.seek(offset + index)
        b = fh.read(1)
        fh.seek(offset + index)
        fh.write(bytes([b[0] ^ 0x01]))


def test_a_flipped_byte_is_caught_by_the_content_checksum(tmp_path):
    path = tmp_path / "f.h5"
    roles = np.zeros((3, 50), dtype=np.int8)  # small: stored uncompressed, no HDF5 filter checks it
    write_h5(path, "splits", {"roles": roles, "y": np.arange(50)}, {"k": 1})
    read_h5(path, "splits")  # intact: reads
    _flip_byte(path, "roles", 7)
    with pytest.raises(CacheError, match="do not match their checksum"):
        read_h5(path, "splits")


def test_edited_params_attributes_are_caught(tmp_path):
    path = tmp_path / "g.h5"
    write_h5(path, "graph", {"W": sp.identity(5, format="csr")}, {"k": 10})
    with h5py.File(path, "r+") as fh:  # claims other params, hash left alone
        fh.attrs["params"] = '{"k": 50}'
    with pytest.raises(CacheError, match="does not match its params_hash"):
        read_h5(path, "graph")
    with h5py.File(path, "r+") as fh:  # params and their hash both rewritten: the content hash
        fh.attrs["params_hash"] = params_hash({"k": 50})  # still covers the original params
    with pytest.raises(CacheError, match="do not match their checksum"):
        read_h5(path, "graph")


def test_a_file_without_its_checksum_is_refused(tmp_path):
    path = tmp_path / "old.h5"
    write_h5(path, "splits", {"y": np.arange(5)}, {"k": 1})
    with h5py.File(path, "r+") as fh:
        del fh.attrs["content_sha256"]  # an edited file, or one an older gssl wrote
    with pytest.raises(CacheError, match="old.h5: has no content_sha256 checksum.*rm "):
        read_h5(path, "splits")


def test_stale_temporary_files_of_dead_local_writers_are_removed_and_no_others(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    from gssl.store.h5io import atomic_path, remove_stale_tmp

    host = socket.gethostname()
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout)
    (tmp_path / "sub").mkdir()
    stale = tmp_path / "sub" / f".g.h5~{host}~{dead}~abc.h5.tmp"
    running = tmp_path / f".f.h5~{host}~{os.getpid()}~abc.h5.tmp"  # this process still writes it
    remote = tmp_path / f".f.h5~another-host~{dead}~abc.h5.tmp"  # not ours to judge
    other = tmp_path / ".notes.tmp"
    for f in (stale, running, remote, other):
        f.write_bytes(b"x")
    assert remove_stale_tmp(tmp_path) == [stale]
    assert not stale.exists() and running.exists() and remote.exists() and other.exists()
    with atomic_path(tmp_path / "out.json") as tmp:  # atomic_path's names follow the pattern
        assert tmp.name.startswith(f".out.json~{host}~{os.getpid()}~") and tmp.name.endswith(".tmp")
        assert remove_stale_tmp(tmp_path) == []  # its own writer is alive
        tmp.write_text("{}")
    assert (tmp_path / "out.json").read_text() == "{}"
