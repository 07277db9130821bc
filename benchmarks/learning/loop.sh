#!/usr/bin/env bash
# Fill the learning ledger run by run: `run.py --next` until no record is missing.
#
#   nohup nice -n 19 taskset -c 1 bash benchmarks/learning/loop.sh > ledger-loop.log 2>&1 &
#
# Run it from the checkout whose benchmarks/learning/results/ should fill (the records land there). It pins
# itself to one core (LEDGER_CPU, default 1) at the lowest priority even when started without taskset/nice,
# and uses the checkout's .venv (or $PYTHON). The runner only writes files: commit the records as they land
# (`git add benchmarks/learning/results && git commit`), then `python benchmarks/learning/report.py`.
# A run that fails is marked (scratch/<case>/.<run>.failed, with its traceback) and skipped from then on;
# a run that is killed resumes from its last checkpoint the next time the loop reaches it.
set -u
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-.venv/bin/python}"
CPU="${LEDGER_CPU:-1}"
while true; do
    echo "== $(date -u +%FT%TZ) next run"
    nice -n 19 taskset -c "$CPU" "$PYTHON" benchmarks/learning/run.py --next
    status=$?
    if [ "$status" -eq 3 ]; then
        echo "== $(date -u +%FT%TZ) ledger complete"
        break
    fi
    [ "$status" -ne 0 ] && sleep 5  # a failed run is marked; do not spin if something is badly wrong
done
