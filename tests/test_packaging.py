"""gssl installed as a package, not from this checkout: what it reads besides its Python modules
(the config schema) ships inside it, and a wheel installed outside the repository validates a
config with nothing but the installed copy on its path."""
import fnmatch
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "gssl"
BUILD_REQUIRES = 77  # pyproject's [build-system] requires setuptools>=77 (PEP 639 license string)


def test_package_data_declares_every_data_file():
    """Every file of src/gssl that is not Python source matches pyproject's package-data, so a
    wheel carries it (a schema left out works in the editable checkout and nowhere else)."""
    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["gssl"]
    data = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert "pipeline/schemas/config.schema.yaml" in data
    assert [p for p in data if not any(fnmatch.fnmatch(p, g) for g in globs)] == []


def test_the_schema_is_read_from_the_package(monkeypatch, tmp_path):
    """load_schema() reads the package's resource, whatever the working directory."""
    from gssl.pipeline.config import SCHEMA_RESOURCE, load_schema, schema_text

    monkeypatch.chdir(tmp_path)
    assert schema_text() == PACKAGE.joinpath("pipeline", *SCHEMA_RESOURCE).read_text()
    assert "datasets" in load_schema()["properties"]


def _setuptools_major() -> int:
    try:
        return int(version("setuptools").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 0


@pytest.mark.slow
def test_a_wheel_installed_outside_the_repo_validates_the_default_config(tmp_path):
    if _setuptools_major() < BUILD_REQUIRES:
        pytest.skip(f"building gssl needs setuptools>={BUILD_REQUIRES} (pyproject's build-system) in the "
                    f"test environment, which has {_setuptools_major() or 'none'}: "
                    f"pip install 'setuptools>={BUILD_REQUIRES}' (offline build, no build isolation)")
    # build from a copy of what the wheel is made of, so that the checkout gets no build/ folder
    src = tmp_path / "checkout"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src)
    shutil.copytree(REPO / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    offline = {**os.environ, "PIP_NO_INDEX": "1"}
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, text=True, env=offline, timeout=120)
    (wheel,) = (tmp_path / "dist").glob("gssl-*.whl")
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True, env=offline, timeout=120)
    assert (site / "gssl" / "pipeline" / "schemas" / "config.schema.yaml").is_file()
    shutil.rmtree(src)  # nothing of the sources is left to fall back on

    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(REPO / "config" / "config.yaml", work / "config.yaml")
    # -S: no site-packages .pth files, so not this checkout's editable install; the installed copy
    # first on the path, then the environment's third-party packages
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "GSSL_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]])}
    code = ("import sys, gssl; print(gssl.__file__); from gssl.cli import main; "
            "sys.exit(main(['config', 'check', 'config.yaml']))")
    proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=work, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    where, ok = proc.stdout.splitlines()[:2]
    assert Path(where).is_relative_to(site), where
    assert ok.startswith("ok: config.yaml (")
