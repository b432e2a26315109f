#!/usr/bin/env bash
# Jetty 9 (Debian libjetty9-java) embedded, one servlet synchronising on a shared
# HashMap (apps/HashMapServlet.java), under wrk (2 threads, 16 connections,
# $WRK_SECS s) on 127.0.0.1:$JETTY_PORT, stopped by GET /stop. Check: wrk saw
# no error, the server's hit count equals wrk's requests + warm-up, plain and
# recorded. Expected findings: bench/real/expected.json (checked by expect.py).
source "$(dirname "$0")/lib.sh"
need_apt libjetty9-java wrk curl
PORT="${JETTY_PORT:-18090}"; SECS="${WRK_SECS:-5}"
J=/usr/share/java
CP="$J/jetty9-server.jar:$J/jetty9-servlet.jar:$J/jetty9-util.jar:$J/jetty9-http.jar:$J/jetty9-io.jar:$J/jetty9-security.jar:$J/servlet-api.jar"
mkdir -p "$WORK/classes"
javac -d "$WORK/classes" -cp "$CP" "$REAL_DIR/apps/HashMapServlet.java" || exit 1
# serve MODE: prints "reqs errors hits rc secs".
serve() {
    local mode=$1 out="$WORK/$1.out" launcher t0 t1
    local cmd=("$JAVA" -cp "$CP:$WORK/classes" HashMapServlet "$PORT")
    t0=$(now)
    if [ "$mode" = plain ]; then
        timeout 300 "${cmd[@]}" > "$out" 2>&1 & launcher=$!
    else
        timeout 300 "$WEFT" record -o "$WORK/jetty.weft" -- "${cmd[@]}" > "$out" 2>&1 & launcher=$!
    fi
    for _ in $(seq 240); do curl -s -o /dev/null "http://127.0.0.1:$PORT/warm" && break; sleep 0.5; done
    timeout $((SECS + 30)) wrk -t2 -c16 -d"${SECS}s" "http://127.0.0.1:$PORT/hit" > "$WORK/$mode.wrk" 2>&1
    curl -s -o /dev/null "http://127.0.0.1:$PORT/stop"
    wait $launcher; local rc=$?
    t1=$(now)
    local reqs errs hits
    reqs=$(grep -o '^ *[0-9]* requests in' "$WORK/$mode.wrk" | awk '{print $1}')
    errs=$(grep -c 'Socket errors\|Non-2xx' "$WORK/$mode.wrk")
    hits=$(grep -o 'total hits [0-9]*' "$out" | awk '{print $3}')
    echo "${reqs:-0} $errs ${hits:-0} $rc $(elapsed $t0 $t1)"
}
read -r pr pe ph prc ps < <(serve plain)
rm -f "$WORK"/jetty*.weft
read -r rr re rh rrc rs < <(serve rec)
# wrk does not count the requests in flight at its deadline (≤ 16), plus 1 warm-up.
ok() { [ "$3" -ge $(($1 + 1)) ] && [ "$3" -le $(($1 + 17)) ] && [ "$2" = 0 ]; }
check="$((pr / SECS)) / $((rr / SECS)) req/s, hits = wrk's count (+≤16 in flight), no errors, exit $prc/$rrc"
if ! ok "$pr" "$pe" "$ph" || ! ok "$rr" "$re" "$rh" || [ "$prc" != "$rrc" ]; then
    check="MISMATCH: plain reqs=$pr err=$pe hits=$ph rc=$prc / rec reqs=$rr err=$re hits=$rh rc=$rrc"
fi
real_row jetty "$check" "$ps" "$rs" "$WORK"/jetty*.weft
python3 "$REAL_DIR/expect.py" jetty "$WORK"/jetty*.weft.json
