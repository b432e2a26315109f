#!/usr/bin/env bash
# What a JVMTI agent costs before it records anything: a do-nothing agent, and one
# with ThreadStart/ThreadEnd on (empty callbacks), against plain java, on one
# workload (default: 100,000 virtual-thread tasks of 20 us, issue 20's bar).
# Usage: JAVA=/path/to/java bench/jvmti_floor/run.sh [PAIRS] ["Workload args"]
# Needs gcc, farm-bench and the workload classes (javac'd into bench/out/classes).
set -euo pipefail
cd "$(dirname "$0")/../.."
java=${JAVA:-java}
pairs=${1:-21}
workload=${2:-VirtualTasks 100000 20 0 1}
home=$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")
out=bench/out/jvmti_floor
mkdir -p "$out" bench/out/classes
gcc -shared -fPIC -O2 -I"$home/include" -I"$home/include/linux" \
    -o "$out/libfloor.so" bench/jvmti_floor/floor_agent.c
javac --release 17 -d bench/out/classes $(find java/workloads/src -name '*.java')
run="-cp bench/out/classes weft.workloads.$workload"
# shellcheck disable=SC2086
{
    echo "## do-nothing agent vs plain java"
    farm-bench -n "$pairs" --vs "$java $run" -- "$java" -agentpath:"$out/libfloor.so" $run | tail -3
    echo "## ThreadStart+ThreadEnd on vs the do-nothing agent"
    farm-bench -n "$pairs" --vs "$java -agentpath:$out/libfloor.so $run" -- "$java" -agentpath:"$out/libfloor.so=se" $run | tail -3
}
