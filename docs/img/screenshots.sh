#!/usr/bin/env bash
# Retake the MLflow UI screenshots in docs/img/ from a finished workflow's results.
#
#   bash docs/img/screenshots.sh                       # results/ and .venv/ of the current folder
#   RESULTS=/path/to/results VENV=/path/to/venv bash docs/img/screenshots.sh
#
# Env: RESULTS (results), VENV (.venv), EXPERIMENT (demo_digits), OUT (the folder of this script),
#      PREFIX (mlflow_: the images' name prefix),
#      PORT (5077), CHROMIUM (chromium; Debian's package), CROP (1: cut off MLflow's left sidebar).
# Needs: $RESULTS/mlflow.db and $RESULTS/mlflow/$EXPERIMENT.summary.json (written by the workflow), the
# venv's mlflow (and Pillow for CROP=1), chromium and curl.
#
# The UI is served on 127.0.0.2 rather than 127.0.0.1: MLflow 3.17 opens its Assistant side panel on
# the first visit from localhost / 127.0.0.1, and a fresh headless profile is always a first visit.
# Any 127.x address is loopback on Linux; --allowed-hosts / --cors-allowed-origins admit it.
set -euo pipefail

RESULTS=${RESULTS:-results}
VENV=${VENV:-.venv}
EXPERIMENT=${EXPERIMENT:-demo_digits}
OUT=${OUT:-$(cd "$(dirname "$0")" && pwd)}
PORT=${PORT:-5077}
CHROMIUM=${CHROMIUM:-chromium}
CROP=${CROP:-1}
PREFIX=${PREFIX:-mlflow_}
HOST=127.0.0.2
BASE="http://$HOST:$PORT"

DB=$(cd "$RESULTS" && pwd)/mlflow.db
[ -f "$DB" ] || { echo "no $DB: run the workflow first" >&2; exit 1; }
EXP_ID=$("$VENV/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["experiment_id"])' \
  "$RESULTS/mlflow/$EXPERIMENT.summary.json")
RUNS="$BASE/#/experiments/$EXP_ID/runs?workflowType=machine_learning"

TMP=$(mktemp -d)
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill -TERM -- "-$SERVER" 2>/dev/null || true; sleep 2; kill -KILL -- "-$SERVER" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# The server in its own process group (set -m), so that stopping it stops its workers too.
set -m
MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false "$VENV/bin/mlflow" ui --backend-store-uri "sqlite:///$DB" \
  --host "$HOST" --port "$PORT" --workers 1 \
  --allowed-hosts "$HOST:$PORT" --cors-allowed-origins "$BASE" > "$TMP/server.log" 2>&1 &
SERVER=$!
set +m
for _ in $(seq 90); do
  curl -sf -o /dev/null "$BASE/health" && curl -sf -o /dev/null "$BASE/" && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$TMP/server.log" >&2; exit 1; }
  sleep 1
done
curl -sf -o /dev/null "$BASE/" || { echo "MLflow UI did not start" >&2; cat "$TMP/server.log" >&2; exit 1; }

# shot NAME WIDTH,HEIGHT VIRTUAL_TIME_MS URL: one screenshot in a fresh browser profile.
shot() {
  local profile; profile=$(mktemp -d "$TMP/profile.XXXX")
  timeout 300 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-breakpad \
    --hide-scrollbars --user-data-dir="$profile" --window-size="$2" --virtual-time-budget="$3" \
    --screenshot="$OUT/$1.png" "$4" > "$TMP/$1.log" 2>&1
  [ -s "$OUT/$1.png" ] || { echo "no screenshot $1" >&2; cat "$TMP/$1.log" >&2; exit 1; }
  if [ "$CROP" = 1 ]; then  # drop MLflow's navigation sidebar (the left 190 px), re-encode compactly
    "$VENV/bin/python" -c 'import sys; from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB"); im.crop((190, 0, im.width, im.height)).save(sys.argv[1], optimize=True)' \
      "$OUT/$1.png"
  fi
  echo "$OUT/$1.png  <-  $4"
}

mkdir -p "$OUT"
shot "${PREFIX}cells"  1600,800  30000 "$RUNS&viewStateShareKey=gssl-cells"
shot "${PREFIX}charts" 1600,800  60000 "$RUNS&viewStateShareKey=gssl-cells&compareRunsMode=CHART"
shot "${PREFIX}splits" 1600,1000 30000 "$RUNS&viewStateShareKey=gssl-splits"
shot "${PREFIX}history" 1600,800 30000 "$RUNS&viewStateShareKey=gssl-history"
# an experiment with a selection stage: its runs, and the first one's page with the grid plot
GRID=$(ls "$RESULTS"/selected/"$EXPERIMENT"/*/*/*/*.grid.json 2>/dev/null | head -1 || true)
if [ -n "$GRID" ]; then
  # the selection's run id, from the experiment's logging ledger (job output -> its runs)
  RUN_ID=$("$VENV/bin/python" -c 'import json,sys; runs = json.load(open(sys.argv[1]))["runs"]; print(next(t[0]["run"] for p, t in runs.items() if p.endswith(sys.argv[2])))' "$RESULTS/mlflow/$EXPERIMENT.summary.json" "$(echo "${GRID#"$RESULTS"/}" | sed "s/\.grid\.json$/.mlflow.json.gz/")")
  PLOT=$(basename "${GRID%.json}.png")
  shot "${PREFIX}selection" 1600,700 30000 "$RUNS&viewStateShareKey=gssl-selection"
  shot "${PREFIX}selection_run" 1600,1000 30000 "$BASE/#/experiments/$EXP_ID/runs/$RUN_ID/artifacts/$PLOT"
fi
# the summary run's table (with the paper's numbers where the experiment gives them)
SUMMARY="$RESULTS/mlflow/$EXPERIMENT.summary.json"
if [ -f "$SUMMARY" ]; then
  SID=$("$VENV/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary_run_id"])' "$SUMMARY")
  shot "${PREFIX}summary" 1600,900 30000 "$BASE/#/experiments/$EXP_ID/runs/$SID/artifacts/$EXPERIMENT.${SUMMARY_TABLE:-md}"
fi
