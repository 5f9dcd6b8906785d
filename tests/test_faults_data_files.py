"""Fault injection (issue 51), data files that are not what they say: a FIFO or a directory as the
data path, a Matrix Market header declaring more than the file holds or than memory allows, and
files whose parser fails. Each is a DatasetError (a ConfigError naming the dataset, at config
check) that names the file and, where the parser gives one, the line, and never echoes the file's
content; nothing is allocated for a size only the header declares. No workflow: the dataset job
and ``gssl config check`` read files with the same reader (test_config.py compares them)."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import numpy as np
import pytest
from workflow_helpers import record

from gssl.cli import main
from gssl.datasets import read_file_dataset
from gssl.errors import ConfigError, DatasetError
from gssl.pipeline.config import validate_config

pytestmark = [pytest.mark.faults]

SECRET = "s3cr3t-token-7f2a"  # in each bad file: no message may show it
LABELS = "a\nb\na\nb\na\nb\n"


def _config(entry: dict) -> dict:
    return {"datasets": {"mine": {"source": "file", **entry}}, "preprocessing": {"raw": []},
            "graphs": {"knn": {"kind": "knn", "k": 3}}, "methods": {"poisson": {"solver": "poisson"}},
            "protocols": {"p": {"kind": "labels_per_class", "n": 1, "repeats": 2}},
            "experiments": {"e": {"datasets": ["mine"], "preprocessing": ["raw"], "graphs": ["knn"],
                                  "methods": ["poisson"], "protocols": ["p"]}}}


def _refused(entry: dict, message: str, named: str | None = None) -> str:
    """Refused by the reader (the dataset job's) and by the config check, naming the file, the
    same words in both, and nothing of SECRET; returns the message."""
    with pytest.raises(DatasetError) as err:
        read_file_dataset(entry)
    text = str(err.value)
    assert message in text and (named or str(entry["path"]).split("/")[-1]) in text, text
    with pytest.raises(ConfigError) as cfg_err:
        validate_config(_config(entry))
    assert message in str(cfg_err.value) and "datasets.mine" in str(cfg_err.value)
    assert SECRET not in text + str(cfg_err.value)
    return text


def test_a_fifo_or_a_directory_as_the_data_path_is_named_as_such(tmp_path):
    os.mkfifo(tmp_path / "pipe.csv")
    (tmp_path / "folder.csv").mkdir()
    t0 = time.perf_counter()
    _refused({"path": str(tmp_path / "pipe.csv"), "label": "label"}, "is a FIFO (a named pipe), not a file")
    _refused({"path": str(tmp_path / "folder.csv"), "label": "label"}, "is a directory, not a file")
    _refused({"path": str(tmp_path / "none.csv"), "label": "label"}, "does not exist")
    (tmp_path / "W.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 0\n")
    os.mkfifo(tmp_path / "labels.txt")  # a FIFO as the second file (the labels) too
    _refused({"path": str(tmp_path / "W.mtx"), "labels": str(tmp_path / "labels.txt")}, "is a FIFO",
             named="labels.txt")
    assert time.perf_counter() - t0 < 30  # never waits for a writer
    record("data file: a FIFO or a directory as the data path", inputs_silently_wrong=0,
           note="named as a FIFO / a directory (not 'does not exist'), by the reader and the config check")


def _mtx(path: Path, size_line: str, body: str = "") -> Path:
    path.write_text(f"%%MatrixMarket matrix coordinate real symmetric\n% {SECRET}\n{size_line}\n{body}")
    return path


@pytest.mark.parametrize("size_line, labels, message", [
    ("1000000000 1000000000 3", "a\nb\n" * 500, "declares a 1,000,000,000 x 1,000,000,000 matrix, but its labels file gives 1,000 points"),
    ("1000 1000 1000000", "a\nb\n" * 500,
     "declares 1,000,000 entries, which take at least 6,000,000 bytes, but the file has"),
    ("6 5 3", LABELS, "declares a 6 x 5 matrix; a graph's weight matrix is square"),
    ("6 6", LABELS, "line 3, the size line, has 2 numbers; a coordinate file gives 3"),
    ("6 6 x", LABELS, "line 3, the size line, is not whole numbers"),
])
def test_a_matrix_market_header_is_checked_before_anything_is_allocated(tmp_path, size_line, labels, message):
    (tmp_path / "y.txt").write_text(labels)
    path = _mtx(tmp_path / "W.mtx", size_line, "2 1 1.0\n3 1 1.0\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    _refused({"path": str(path), "labels": str(tmp_path / "y.txt")}, message)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert time.perf_counter() - t0 < 5 and grown_mb < 200, grown_mb
    record(f"data file: Matrix Market size line {size_line!r}", inputs_silently_wrong=0,
           note=f"refused from its header in {time.perf_counter() - t0:.2f} s, peak memory +{grown_mb:.0f} MB")


def test_the_memory_a_header_asks_for_is_bounded(tmp_path, monkeypatch):
    (tmp_path / "y.txt").write_text("a\nb\n" * 50_000)
    path = _mtx(tmp_path / "W.mtx", "100000 100000 3", "2 1 1.0\n3 1 1.0\n4 1 1.0\n")
    monkeypatch.setenv("GSSL_MAX_DATA_BYTES", "100000")
    _refused({"path": str(path), "labels": str(tmp_path / "y.txt")}, "over the bound of 0.0 GiB (half "
             "this machine's memory; GSSL_MAX_DATA_BYTES sets it)")


@pytest.mark.parametrize("name, content, entry, message", [
    ("W.mtx", f"%%MatrixMarket matrix coordinate real symmetric\n6 6 2\n2 1 1.0\n{SECRET} 1 2.0 extra words here\n",
     {"labels": "y.txt"}, "not a Matrix Market file: ValueError"),
    ("passwd.csv", f"root:x:0:0:{SECRET}:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/false\n",
     {"label": 0}, "line 1, the header, is one field (44 characters) split by ','"),
    ("d.csv", f"x1,x2,label\n1,2,a\n3,{SECRET},b\n", {"label": "label"},
     "feature column 'x2' is not numeric (line 3: a value of 17 characters that is not a number)"),
    ("d.csv", f"x1,x2,label\n{SECRET},1,a\n{SECRET},2,b\n1,3,a\n", {"label": "label", "id": "x1"},
     "id column 'x1' repeats an id (lines [2, 3]"),
    ("X.npy", f"{SECRET} is not an array\n", {"labels": "y.txt"}, "cannot read as .npy: ValueError"),
    ("X.npz", f"{SECRET}\n", {}, "cannot read as .npz: "),
    ("d.svm", f"1 1:0.5 {SECRET}\n", {}, "not an svmlight/libsvm file: ValueError"),
    ("d.mat", f"{SECRET}" * 20, {}, "cannot read as a MATLAB file: "),
])
def test_a_parser_error_names_the_file_and_line_and_echoes_nothing(tmp_path, name, content, entry, message):
    (tmp_path / "y.txt").write_text(LABELS)
    (tmp_path / name).write_text(content)
    entry = {k: (str(tmp_path / v) if k == "labels" else v) for k, v in entry.items()}
    _refused({"path": str(tmp_path / name), **entry}, message)
    record(f"data file: a bad {Path(name).suffix} file", inputs_silently_wrong=0,
           note="DatasetError naming the file (and line where the parser gives one); content not echoed")


def test_a_labels_file_that_is_not_text_is_a_dataset_error(tmp_path):
    np.save(tmp_path / "X.npy", np.ones((6, 2)))
    (tmp_path / "y.txt").write_bytes(b"\xff\xfe" + SECRET.encode() + b"\x00\x81")
    with pytest.raises(DatasetError, match="y.txt: not a labels file gssl reads .*UnicodeDecodeError"):
        read_file_dataset({"path": str(tmp_path / "X.npy"), "labels": str(tmp_path / "y.txt")})


def test_gssl_config_check_names_a_fifo_and_a_huge_header_without_a_traceback(tmp_path, monkeypatch, capsys):
    import yaml

    monkeypatch.chdir(tmp_path)
    os.mkfifo("pipe.csv")
    (tmp_path / "y.txt").write_text(LABELS)
    _mtx(tmp_path / "W.mtx", "1000000000 1000000000 3", "2 1 1.0\n")
    for entry, message in (({"path": "pipe.csv", "label": "label"}, "is a FIFO"),
                           ({"path": "W.mtx", "labels": "y.txt"}, "declares a 1,000,000,000 x 1,000,000,000")):
        Path("c.yaml").write_text(yaml.safe_dump(_config(entry)))
        assert main(["config", "check", "c.yaml"]) == 1
        out = capsys.readouterr()
        assert message in out.err and "Traceback" not in out.out + out.err, out.err
