#!/usr/bin/env bash
# Simulator speed and memory on a synthetic graph of N ops (default 10 M):
# issue 17's bar is <= 5 s and <= 2 GB. Prints the example's timing and GNU time's max RSS.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-10000000}
cargo build --release -q -p weft-whatif --example sim_speed
/usr/bin/time -f "max RSS %M KB, wall %e s" target/release/examples/sim_speed "$N"
