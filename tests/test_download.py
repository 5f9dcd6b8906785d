"""Downloads against a loopback HTTP server: mirror fetch, checksums, unreachable sources, retries."""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import os
import socket
import threading

import pytest

from gssl.datasets import DatasetSpec, FileSpec, download_file, fetch, get_spec, list_datasets, load, sources_for
from gssl.errors import ChecksumError, SourcesUnavailableError

FAST = {"retries": 2, "backoff": 0.01, "timeout": 5}


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the server's folder; ``fail_plan[path]`` lists status codes to answer before serving."""

    def do_GET(self):  # noqa: N802 (http.server API)
        self.server.hits[self.path] = self.server.hits.get(self.path, 0) + 1
        plan = self.server.fail_plan.get(self.path)
        if plan:
            self.send_error(plan.pop(0))
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    """serve(folder) -> (base URL, server) for a loopback HTTP server running in a thread."""
    servers = []

    def start(folder):
        handler = lambda *a, **kw: _Handler(*a, directory=str(folder), **kw)  # noqa: E731
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        srv.hits, srv.fail_plan = {}, {}
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}", srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/nothing/here.bin"


def _toy_spec(payload: bytes, sha: str | None = None) -> DatasetSpec:
    sha = sha or hashlib.sha256(payload).hexdigest()
    return DatasetSpec("toy", "mirror", "toy file", loader=None, folder="toy",
                       files=(FileSpec("toy.bin", sha, len(payload)),))


@pytest.mark.realdata
def test_http_mirror_fetches_real_dataset(tmp_path, serve, mirror):
    base, srv = serve(mirror)
    paths = fetch("g50c_sindhwani", tmp_path, mirror=base, public=False, **FAST)
    assert paths == {"g50c.mat": tmp_path / "g50c.mat"} and srv.hits == {"/g50c/g50c.mat": 1}
    ds = load("g50c_sindhwani", tmp_path, mirror=base)  # present with the right sha: no new request
    assert ds.X.shape == (550, 50) and srv.hits == {"/g50c/g50c.mat": 1}
    assert sorted(os.listdir(tmp_path)) == ["g50c.mat"]


def test_checksum_mismatch_names_url_and_hashes_and_keeps_nothing(tmp_path, serve):
    (tmp_path / "srv" / "toy").mkdir(parents=True)
    (tmp_path / "srv" / "toy" / "toy.bin").write_bytes(b"tampered")
    base, _ = serve(tmp_path / "srv")
    expected = hashlib.sha256(b"original").hexdigest()
    actual = hashlib.sha256(b"tampered").hexdigest()
    raw = tmp_path / "raw"
    with pytest.raises(ChecksumError) as info:
        fetch("toy", raw, mirror=base, spec=_toy_spec(b"original"), **FAST)
    msg = str(info.value)
    assert f"{base}/toy/toy.bin" in msg and expected in msg and actual in msg
    assert os.listdir(raw) == []


def test_checksum_mismatch_falls_through_to_next_source(tmp_path, serve):
    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    (tmp_path / "bad" / "f.bin").write_bytes(b"wrong")
    (tmp_path / "good" / "f.bin").write_bytes(b"right")
    bad, _ = serve(tmp_path / "bad")
    good, _ = serve(tmp_path / "good")
    p = download_file("f.bin", hashlib.sha256(b"right").hexdigest(), [f"{bad}/f.bin", f"{good}/f.bin"],
                      tmp_path / "raw", **FAST)
    assert p.read_bytes() == b"right" and os.listdir(tmp_path / "raw") == ["f.bin"]


def test_all_sources_unreachable_lists_each(tmp_path, serve):
    base, srv = serve(tmp_path)  # serves an empty folder: 404
    sources = [_closed_port_url(), f"{base}/missing.bin", str(tmp_path / "no" / "such.bin")]
    with pytest.raises(SourcesUnavailableError) as info:
        download_file("x.bin", "0" * 64, sources, tmp_path / "raw", **FAST)
    msg = str(info.value)
    assert all(s in msg for s in sources) and "404" in msg and "GSSL_DATA_MIRROR" in msg
    assert srv.hits == {"/missing.bin": 1}  # a 404 is not retried
    assert not (tmp_path / "raw" / "x.bin").exists()


def test_transient_500_is_retried(tmp_path, serve):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "f.bin").write_bytes(b"payload")
    base, srv = serve(tmp_path / "srv")
    srv.fail_plan["/f.bin"] = [500, 503]
    p = download_file("f.bin", hashlib.sha256(b"payload").hexdigest(), [f"{base}/f.bin"], tmp_path / "raw", **FAST)
    assert p.read_bytes() == b"payload" and srv.hits["/f.bin"] == 3


def test_persistent_500_gives_up_after_retries(tmp_path, serve):
    base, srv = serve(tmp_path)
    srv.fail_plan["/f.bin"] = [500] * 10
    with pytest.raises(SourcesUnavailableError, match="500"):
        download_file("f.bin", "0" * 64, [f"{base}/f.bin"], tmp_path / "raw", **FAST)
    assert srv.hits["/f.bin"] == FAST["retries"] + 1


def test_present_file_with_right_sha_is_not_refetched(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "f.bin").write_bytes(b"ok")
    before = (raw / "f.bin").stat().st_mtime_ns
    p = download_file("f.bin", hashlib.sha256(b"ok").hexdigest(), [_closed_port_url()], raw, **FAST)
    assert p.stat().st_mtime_ns == before
    # a present file with the wrong bytes is replaced from a source
    (tmp_path / "src.bin").write_bytes(b"new")
    (raw / "g.bin").write_bytes(b"stale")
    download_file("g.bin", hashlib.sha256(b"new").hexdigest(), [str(tmp_path / "src.bin")], raw, **FAST)
    assert (raw / "g.bin").read_bytes() == b"new"


def test_sources_order_mirror_first():
    spec = get_spec("optdigits")
    f = spec.files[0]
    assert sources_for(spec, f, "http://m.example/data/") == ["http://m.example/data/optdigits/optdigits.tra", *f.urls]
    assert sources_for(spec, f, "/srv/data", public=False) == ["/srv/data/optdigits/optdigits.tra"]
    assert sources_for(spec, f, None) == list(f.urls)


@pytest.mark.realdata
def test_registry_sha256_and_public_urls_match_manifest(mirror):
    rows = [line.split("\t") for line in (mirror / "MANIFEST.tsv").read_text().splitlines()[1:]]
    manifest = {(folder, name): (int(size), sha) for folder, name, size, sha in rows}
    used = set()
    for name in list_datasets():
        spec = get_spec(name)
        for f in spec.files:
            assert manifest[(spec.folder, f.name)] == (f.size, f.sha256)
            used.add((spec.folder, f.name))
            pinned = [u for u in f.urls if u.startswith("https://raw.githubusercontent.com/")]
            assert pinned and all(len(u.split("/")[5]) == 40 for u in pinned), f.urls
    # only the alternative USPS text form (zip.*) is not a canonical source file
    assert set(manifest) - used == {("usps", "zip.train.gz"), ("usps", "zip.test.gz"), ("usps", "zip.info.txt")}


def test_local_mirror_copy_with_spec_override(tmp_path):
    (tmp_path / "m" / "toy").mkdir(parents=True)
    (tmp_path / "m" / "toy" / "toy.bin").write_bytes(b"abc")
    spec = dataclasses.replace(_toy_spec(b"abc"), files=(FileSpec("toy.bin", hashlib.sha256(b"abc").hexdigest(), 3,
                                                                  (_closed_port_url(),)),))
    paths = fetch("toy", tmp_path / "raw", mirror=tmp_path / "m", spec=spec, **FAST)
    assert paths["toy.bin"].read_bytes() == b"abc"
