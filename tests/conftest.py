"""Shared fixtures: repository paths and the data mirror (../shared/data or GSSL_DATA_MIRROR)."""
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def mirror_path() -> Path:
    env = os.environ.get("GSSL_DATA_MIRROR")
    path = Path(env) if env and "://" not in env else REPO.parent / "shared" / "data"
    return path.resolve()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = mirror_path()
    if not (path / "MANIFEST.tsv").exists():
        pytest.fail(f"data mirror not found at {path}: set GSSL_DATA_MIRROR to the shared/data folder")
    return path
