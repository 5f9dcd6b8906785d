"""Shared fixtures: repository paths and the data mirror (../shared/data or GSSL_DATA_MIRROR).

Tests that read the real data mirror carry the ``realdata`` marker (tests that request the
``mirror`` fixture get it automatically). Without a mirror (no MANIFEST.tsv at
:func:`mirror_path`) they are skipped with the reason below, and the session says how many were
left out; with one, they run. ``GSSL_OFFLINE`` defaults to 1 here, so no test reaches the public
dataset URLs: only the mirror or loopback servers.
"""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REALDATA_REASON = "needs the data mirror: set GSSL_DATA_MIRROR to a folder laid out like ../shared/data"

# never download from the public URLs during tests (an explicit GSSL_OFFLINE=0 still wins)
os.environ.setdefault("GSSL_OFFLINE", "1")


def pytest_configure(config):
    """Under pytest-xdist (make test, make check: one worker per core) each worker computes on one
    thread. Numba's OpenMP threads spin while they wait, so two workers' parallel kernels on two
    cores starve each other: an MTV fit took 52 s beside another worker's instead of 0.8 s alone.
    Tests that are about thread counts set their own (and the workflow's jobs, their job's)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import numba
        from threadpoolctl import threadpool_limits

        numba.set_num_threads(1)
        threadpool_limits(1, user_api="blas")


def mirror_path() -> Path:
    """GSSL_DATA_MIRROR when it names a local folder, else <repo>/../shared/data."""
    env = os.environ.get("GSSL_DATA_MIRROR")
    path = Path(env) if env and "://" not in env else REPO.parent / "shared" / "data"
    return path.resolve()


def mirror_present() -> bool:
    return (mirror_path() / "MANIFEST.tsv").is_file()


def _missing() -> str:
    return f"no MANIFEST.tsv at {mirror_path()}"


def pytest_report_header(config):
    if mirror_present():
        return f"data mirror: {mirror_path()} (tests marked realdata run)"
    return (f"data mirror: absent ({_missing()}): tests marked realdata will be skipped; to run them, "
            f"set GSSL_DATA_MIRROR to a folder laid out like ../shared/data")


def _heavy_files_first(items) -> None:
    """Files with workflow runs (marker e2e), then files with slow tests, then the rest, each group
    in collection order. make test hands whole files to its two processes in this order
    (--dist loadfile --no-loadscope-reorder), so the long files start first and the many short
    ones fill in at the end, instead of a long file starting last while the other process idles."""
    weight: dict = {}
    for item in items:
        w = 2 if item.get_closest_marker("e2e") else 1 if item.get_closest_marker("slow") else 0
        weight[item.path] = max(w, weight.get(item.path, 0))
    items.sort(key=lambda item: -weight[item.path])  # stable: order kept within


def pytest_collection_modifyitems(config, items):
    _heavy_files_first(items)
    present = mirror_present()
    skip = pytest.mark.skip(reason=f"{REALDATA_REASON} ({_missing()})")
    for item in items:
        if "mirror" in getattr(item, "fixturenames", ()) and item.get_closest_marker("realdata") is None:
            item.add_marker(pytest.mark.realdata)
        if not present and item.get_closest_marker("realdata") is not None:
            item.add_marker(skip)


FIGURE_COLUMNS = ("jobs", "runs", "splits", "finished", "misfiled", "lost", "twice", "running",
                  "accepted_corrupt", "inputs_silently_wrong")


_REPORTED_ROWS: list[dict] = []  # figure rows that reached this process in test reports


def _figure_rows() -> list:
    return getattr(sys.modules.get("workflow_helpers"), "FIGURE_ROWS", [])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A test's new figure rows ride on its report (the report copies item.user_properties), so
    that under pytest-xdist (make test) the controlling process, which prints the table, gets the
    workers' rows."""
    before = len(_figure_rows())
    yield
    if len(_figure_rows()) > before:
        item.user_properties.append(("fault_figures", _figure_rows()[before:]))


def pytest_runtest_logreport(report):
    if report.when != "call":  # the teardown report carries the same properties
        return
    for key, value in getattr(report, "user_properties", ()):
        if key == "fault_figures":
            _REPORTED_ROWS.extend(value)


def _print_fault_figures(terminalreporter) -> None:
    """The fault-injection suite's figures (tests/test_faults_*.py), one row per case that ran."""
    rows = _REPORTED_ROWS
    if not rows:
        return
    terminalreporter.section("fault-injection figures (issue #21)")
    terminalreporter.write_line("| case | " + " | ".join(FIGURE_COLUMNS) + " | note |")
    terminalreporter.write_line("|---" * (len(FIGURE_COLUMNS) + 2) + "|")
    for row in rows:
        cells = [str(row.get(c, "")) for c in FIGURE_COLUMNS]
        terminalreporter.write_line(f"| {row['case']} | " + " | ".join(cells) + f" | {row.get('note', '')} |")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    _print_fault_figures(terminalreporter)
    # the header is hidden under -q (make test): say where the real data came from here too
    terminalreporter.write_line(pytest_report_header(config))
    if mirror_present():
        return
    n = sum(1 for rep in terminalreporter.stats.get("skipped", [])
            if isinstance(rep.longrepr, tuple) and REALDATA_REASON in str(rep.longrepr[2]))
    if n:
        terminalreporter.write_line(f"realdata: {n} test(s) left out, {REALDATA_REASON} ({_missing()})")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture()
def default_config() -> dict:
    """The embedded default config (config/config.yaml) as read from disk: a fresh copy per test,
    to change at will."""
    import yaml

    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The local data mirror folder (tests using it are realdata: skipped when it is absent)."""
    path = mirror_path()
    if not (path / "MANIFEST.tsv").exists():
        pytest.fail(f"data mirror not found at {path}: {REALDATA_REASON}")
    return path


def build_moons_cell(folder: Path, protocols: dict, n_samples: int = 120,
                     weights: str = "binary") -> Path:
    """A small cached cell in ``folder``: data, features and a kNN graph of two moons in 5-D, and
    one splits file ``<protocol id>.h5`` per entry of ``protocols`` (id -> spec)."""
    from gssl.pipeline.stages import build_dataset, build_features, build_graph, build_splits

    entry = {"source": "two_moons", "params": {"n_samples": n_samples, "n_features": 5,
                                               "noise": 0.1, "random_state": 0}}
    build_dataset("moons", entry, None, folder / "data.h5")
    build_features(folder / "data.h5", ["standardize"], folder / "features.h5")
    build_graph(folder / "features.h5", {"kind": "knn", "k": 8, "weights": weights,
                                         "laplacian": "normalized"}, folder / "graph.h5")
    for pid, spec in protocols.items():
        build_splits(folder / "data.h5", "moons", pid, spec, folder / f"{pid}.h5")
    return folder
