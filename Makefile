# gssl — the two commands: `make run` (set up and run the default workflow) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= 2
STAMP  := $(VENV)/.installed

.PHONY: run test check lint report ui server bench clean help

help:
	@echo "make run    - create $(VENV), install, run the default workflow (config/config.yaml)"
	@echo "make test   - create/update $(VENV), run the test suite (what CI runs)"
	@echo "make check  - the development loop: unit tests only (no workflow runs), about 1.5 min"
	@echo "make lint   - snakemake --lint"
	@echo "make report - HTML report of a config's run: make report [CONFIG=config/experiments/x.yaml]"
	@echo "make ui     - MLflow UI on results/mlflow.db (http://127.0.0.1:$(PORT); make ui PORT=5001)"
	@echo "make server - shared MLflow server: PostgreSQL store + proxied artifacts (http://127.0.0.1:5000)"
	@echo "make bench  - pipeline overhead benchmark"

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete
	$(BIN)/snakemake --cores 1 --report results/report.html
	@echo "Tables: results/tables/  Plots: results/plots/  Report: results/report.html  MLflow UI: make ui"

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# unit tests only: the workflow runs (e2e, faults, cluster, server) and slow tests are left to make test
check: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m "not e2e and not slow and not faults and not cluster and not server" --durations=5

lint: $(STAMP)
	$(BIN)/snakemake --lint

# the report of the config you ran: make report CONFIG=config/experiments/mtv.yaml (merged over
# the default, as the workflow merges it), written into that config's results folder
CONFIG ?=
report: $(STAMP)
	@results=$$($(BIN)/python -c "import sys; from gssl.pipeline.config import load_yaml_files; print(load_yaml_files(['config/config.yaml', *sys.argv[1:]]).get('results') or 'results')" $(CONFIG)) && \
	  $(BIN)/snakemake --cores 1 $(if $(CONFIG),--configfile $(CONFIG)) --report $$results/report.html && \
	  echo "Report: $$results/report.html"

# one worker: the UI serves one person, and mlflow's default of 4 workers, each importing mlflow,
# kept a 2-core machine busy for minutes before the port answered; no job runner (nothing of
# gssl's uses MLflow's server-side jobs, and its consumer held some 480 MB)
PORT ?= 5000
ui: $(STAMP)
	@echo "Open an experiment on its comparison of cells (the links below), or click 'Model training' once:"
	@$(BIN)/python -c "import glob, json; [print('  ' + d['experiment'] + ': ' + d['ui']) for d in (json.load(open(p)) for p in sorted(glob.glob('results/mlflow/*.summary.json'))) if 'ui' in d]"
	MLFLOW_DISABLE_TELEMETRY=$${MLFLOW_DISABLE_TELEMETRY:-true} MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false $(BIN)/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/results/mlflow.db --host 127.0.0.1 --port $(PORT) --workers 1

# a tracking server for many runs or a team: PostgreSQL backend (created on first use in
# SERVER_DIR), proxied artifact store, bound to 127.0.0.1; log to it with
# MLFLOW_TRACKING_URI=http://127.0.0.1:$(SERVER_PORT) make run. BACKEND=sqlite without PostgreSQL.
SERVER_DIR  ?= results/mlflow-server
SERVER_PORT ?= 5000
BACKEND     ?= postgresql
server: $(STAMP)
	$(BIN)/python -m gssl.tracking.server --dir $(SERVER_DIR) --port $(SERVER_PORT) --backend $(BACKEND)

bench: $(STAMP)
	$(BIN)/python benchmarks/pipeline_overhead.py

clean:
	rm -rf results resources logs .snakemake
