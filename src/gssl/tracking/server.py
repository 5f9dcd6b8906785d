"""A shared MLflow tracking server for gssl runs: PostgreSQL backend store, proxied artifacts.

``make server`` (``python -m gssl.tracking.server``) starts, in the foreground, a PostgreSQL cluster of its
own (created on first use under ``--dir``) and ``mlflow server`` on it, both bound to 127.0.0.1;
Ctrl-C stops both. Runs log to it with ``MLFLOW_TRACKING_URI=http://127.0.0.1:5000``: clients
talk HTTP only (artifacts go through the server, ``--artifacts-destination``), so compute nodes
and workflow jobs need neither PostgreSQL drivers nor the artifact folder.

Why PostgreSQL: one sqlite file serialises every writer; a team's server, many concurrent
logging jobs and the MLflow UI want a real database. ``--backend sqlite`` gives the same server on
a sqlite file where PostgreSQL is not installed.

Security: PostgreSQL listens on 127.0.0.1 only (no Unix socket), with a generated password
(scram-sha-256) kept in ``<dir>/postgres/pgpass`` (mode 0600) and handed to MLflow through
``PGPASSFILE``, never on a command line; ``--dir`` and all the server writes are the user's alone
(0700, umask 077). MLflow has no authentication of its own: on a shared host (a cluster's login
node) every local user can reach 127.0.0.1:<port>, and binding ``--host`` elsewhere exposes the
runs to that network; put it behind a proxy that authenticates first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..errors import GsslError


class ServerError(GsslError):
    """The tracking server or its database cannot be started."""


PG_USER = "gssl"
PG_DATABASE = "mlflow"
INSTALL_HINT = ("install PostgreSQL (Debian/Ubuntu: sudo apt-get install postgresql; conda: "
                "conda install -c conda-forge postgresql) or use --backend sqlite")


def find_pg_bin() -> Path | None:
    """The folder of initdb/pg_ctl: on PATH, else Debian's /usr/lib/postgresql/<newest>/bin."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
                      key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return versions[-1].parent if versions else None


@dataclass
class Postgres:
    """A PostgreSQL cluster under ``folder`` (data in ``folder/data``), listening on 127.0.0.1."""

    folder: Path
    port: int
    bin_dir: Path

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def pgpass(self) -> Path:
        return self.folder / "pgpass"

    @property
    def uri(self) -> str:
        # the password comes from PGPASSFILE (libpq), so it is in no URI, log or process list
        return f"postgresql+psycopg://{PG_USER}@127.0.0.1:{self.port}/{PG_DATABASE}"

    def env(self) -> dict:
        return {**os.environ, "PGPASSFILE": str(self.pgpass)}

    # -- the cluster's life --------------------------------------------------------------------
    def init(self) -> None:
        """Create the cluster once (initdb with a generated superuser password)."""
        if (self.data / "PG_VERSION").is_file():
            return
        owner = _pg_owner()  # under root the cluster belongs to the postgres user
        private_folder(self.folder, owner=owner)  # a failed earlier init may have chowned it
        if owner is not None:
            os.chown(self.folder, owner.pw_uid, owner.pw_gid, follow_symlinks=False)
        password = secrets.token_urlsafe(24)
        pwfile = self.folder / ".initdb-password"
        _write_private(pwfile, password + "\n", owner)  # read by initdb
        _write_private(self.pgpass, f"127.0.0.1:*:*:{PG_USER}:{password}\n")  # read by MLflow
        try:
            self._run(["initdb", "-D", str(self.data), "-U", PG_USER, "--pwfile", str(pwfile),
                       "--auth-host=scram-sha-256", "--auth-local=reject", "-E", "UTF8",
                       "--no-instructions"], "initdb")
        finally:
            pwfile.unlink(missing_ok=True)

    def start(self) -> None:
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories=''"
        self._run(["pg_ctl", "-D", str(self.data), "-l", str(self.folder / "postgres.log"),
                   "-o", opts, "-w", "-t", "60", "start"], "pg_ctl start")
        self._create_database()

    def stop(self) -> None:
        with contextlib.suppress(ServerError):
            self._run(["pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"], "pg_ctl stop")

    def _create_database(self) -> None:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=PG_USER, dbname="postgres",
                             passfile=str(self.pgpass), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                  (PG_DATABASE,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{PG_DATABASE}"')

    def _run(self, cmd: list[str], what: str) -> None:
        cmd = [str(self.bin_dir / cmd[0]), *cmd[1:]]
        owner = _pg_owner()
        if owner is not None:
            cmd = ["runuser", "-u", owner.pw_name, "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd="/")
        if proc.returncode != 0:
            log = self.folder / "postgres.log"
            tail = log.read_text()[-1500:] if log.is_file() else ""
            raise ServerError(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()}\n"
                              f"{tail}".rstrip())


def _write_private(path: Path, text: str, owner=None) -> None:
    """A new file of mode 0600 (never through a link someone planted), owned by ``owner``."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)
        if owner is not None:
            os.fchown(f.fileno(), owner.pw_uid, owner.pw_gid)
        f.write(text)


def private_folder(folder: Path, traversable: bool = False, owner=None) -> Path:
    """``folder`` created with mode 0700 (0711 when another account, PostgreSQL's under root,
    must pass through it), refused when a user other than us (or ``owner``) owns it: a folder
    planted in /tmp."""
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    st = folder.lstat()
    if st.st_uid not in (os.geteuid(), getattr(owner, "pw_uid", os.geteuid())):
        raise ServerError(f"{folder} belongs to another user (uid {st.st_uid}); give --dir a "
                          f"folder of your own")
    folder.chmod(0o711 if traversable else 0o700)
    return folder


def _pg_owner():
    """The account PostgreSQL must run as: None for a normal user, the postgres user under root
    (PostgreSQL refuses to run as root)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise ServerError("PostgreSQL refuses to run as root and there is no 'postgres' user; run "
                          "as a normal user, or use --backend sqlite") from None


def prepare_postgres(folder: Path, port: int) -> Postgres:
    bin_dir = find_pg_bin()
    if bin_dir is None:
        raise ServerError(f"PostgreSQL's initdb/pg_ctl were not found; {INSTALL_HINT}")
    try:
        import psycopg  # noqa: F401 (MLflow's driver for postgresql+psycopg)
    except ImportError:
        raise ServerError("the PostgreSQL driver is missing: pip install 'gssl[server]' "
                          "(psycopg), or use --backend sqlite") from None
    pg = Postgres(folder=folder.resolve() / "postgres", port=port, bin_dir=bin_dir)
    if _pg_owner() is not None:
        _check_reachable_by_postgres(folder.resolve())
    pg.init()
    return pg


def _check_reachable_by_postgres(folder: Path) -> None:
    probe = subprocess.run(["runuser", "-u", "postgres", "--", "test", "-x", str(folder)],
                           capture_output=True)
    if probe.returncode != 0:
        raise ServerError(f"running as root, PostgreSQL runs as the postgres user, which cannot "
                          f"pass through the folders above {folder}; give --dir a folder of "
                          f"root's below folders others may enter (e.g. under /srv)")


def mlflow_command(backend_uri: str, artifacts: Path, host: str, port: int) -> list[str]:
    mlflow = Path(sys.executable).with_name("mlflow")
    return [str(mlflow) if mlflow.exists() else "mlflow", "server",
            "--backend-store-uri", backend_uri,
            "--artifacts-destination", str(artifacts), "--serve-artifacts",
            "--host", host, "--port", str(port), "--workers", "1"]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                if r.status == 200:
                    return
        if proc.poll() is not None:
            raise ServerError(f"mlflow server exited with code {proc.returncode} before answering")
        if time.monotonic() > deadline:
            raise ServerError(f"mlflow server did not answer {url}/health within {timeout:.0f} s")
        time.sleep(0.3)


def serve(folder: Path, *, host: str = "127.0.0.1", port: int = 5000, backend: str = "postgresql",
          pg_port: int = 5433, ready=None) -> int:
    """Run the server until it exits or is interrupted; returns its exit code.

    ``ready(url)`` is called once it answers (the CLI prints the address; tests start a run).
    """
    if backend not in ("postgresql", "sqlite"):
        raise ServerError(f"unknown backend {backend!r}: postgresql or sqlite")
    # the runs, artifacts and database are the user's alone (0700; 0711 lets PostgreSQL's own
    # account pass through under root), and so is everything the server writes (umask 077)
    folder = private_folder(folder, traversable=backend == "postgresql" and _pg_owner() is not None)
    old_umask = os.umask(0o077)
    pg, proc = None, None
    try:
        if backend == "postgresql":
            pg = prepare_postgres(folder, pg_port)
            pg.start()  # inside the try: a failed start still stops the cluster below
            backend_uri, env = pg.uri, pg.env()
        else:
            backend_uri, env = f"sqlite:///{folder / 'mlflow.db'}", dict(os.environ)
        # no telemetry, and no GenAI job runner (MLflow 3's huey workers: a tracking store never uses)
        env.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        env.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
        url = f"http://{host}:{port}"
        with open(folder / "mlflow-server.log", "ab") as log:
            proc = subprocess.Popen(mlflow_command(backend_uri, folder / "artifacts", host, port),
                                    env=env, stdout=log, stderr=log, start_new_session=True)
        try:
            wait_healthy(url, proc)
        except ServerError as exc:
            tail = (folder / "mlflow-server.log").read_text(errors="replace")[-2000:]
            raise ServerError(f"{exc}; its log ({folder / 'mlflow-server.log'}) ends:\n{tail}") from None
        if ready is not None:
            ready(url)
        return proc.wait()
    finally:
        os.umask(old_umask)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if pg is not None:
            pg.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gssl.tracking.server",
        description="MLflow tracking server for gssl runs: PostgreSQL backend store (created on "
                    "first use in --dir), proxied artifact store, on 127.0.0.1. Ctrl-C stops it.")
    parser.add_argument("--dir", type=Path, default=Path("results/mlflow-server"),
                        help="database, artifacts and logs (default: results/mlflow-server)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; MLflow has no authentication)")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--backend", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument("--pg-port", type=int, default=5433, help="PostgreSQL's port (loopback)")
    args = parser.parse_args(argv)

    def ready(url):
        print(f"MLflow server: {url}  (backend: {args.backend}, files: {args.dir})\n"
              f"Log runs to it:  MLFLOW_TRACKING_URI={url} make run\n"
              f"Ctrl-C stops the server" + (" and PostgreSQL." if args.backend == "postgresql" else "."),
              flush=True)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally: stop PostgreSQL
    try:
        return serve(args.dir, host=args.host, port=args.port, backend=args.backend,
                     pg_port=args.pg_port, ready=ready)
    except KeyboardInterrupt:
        return 0
    except GsslError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
