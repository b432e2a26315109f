#!/bin/sh
# A longer run of the trace fuzz test (crates/cli/tests/robustness.rs,
# fuzzed_traces_are_read_or_refused_cleanly): CASES damaged copies of a small real
# trace per seed (truncations, bit flips, block reorderings, CRC-valid field
# mutations, header mutations), each read by `weft report --json` (every tenth
# also exported to every format) under a 1-2 GB address-space limit and a 60 s
# timeout. Any panic, abort, memory-limit kill or hang fails the run.
# Prints one WEFT-FUZZ line per seed: cases read / refused with one clean line,
# per kind as read/refused.
#
#   bench/fuzz.sh [CASES_PER_SEED=2000] [SEEDS="1 2 3 4 5"]
set -e
cd "$(dirname "$0")/.."
CASES=${1:-2000}
SEEDS=${2:-"1 2 3 4 5"}
cargo build --release --quiet
for seed in $SEEDS; do
  WEFT_FUZZ_CASES=$CASES WEFT_FUZZ_SEED=$seed \
    cargo test --release --quiet -p weft-cli --test robustness fuzzed_traces_are_read_or_refused_cleanly -- --nocapture 2>&1 |
    grep -E '^WEFT-FUZZ|panicked|failed' || true
done
