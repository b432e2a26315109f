#!/usr/bin/env bash
# Apache Derby 10.14 network server (Debian libderby-java) on 127.0.0.1:$DERBY_PORT,
# under 8 JDBC clients (apps/DerbyClients.java, a plain JVM) moving money between
# 16 accounts for $DERBY_SECS s (row locks), then shut down. Only the server is
# recorded. Check: money is conserved (total 16000) and transactions > 0, plain
# and recorded. Expected findings: bench/real/expected.json (checked by expect.py).
source "$(dirname "$0")/lib.sh"
need_apt libderby-java libderbyclient-java
PORT="${DERBY_PORT:-15270}"; SECS="${DERBY_SECS:-8}"
J=/usr/share/java
SCP="$J/derby.jar:$J/derbynet.jar:$J/derbytools.jar"
mkdir -p "$WORK/classes"
javac -d "$WORK/classes" "$REAL_DIR/apps/DerbyClients.java" || exit 1
# serve MODE: prints "transactions total rc secs".
serve() {
    local mode=$1 home="$WORK/$1-db" launcher t0 t1
    rm -rf "$home"; mkdir -p "$home"
    local cmd=("$JAVA" -Dderby.system.home="$home" -cp "$SCP" org.apache.derby.drda.NetworkServerControl
               start -h 127.0.0.1 -p "$PORT" -noSecurityManager)
    t0=$(now)
    if [ "$mode" = plain ]; then
        timeout 600 "${cmd[@]}" > "$WORK/$mode.out" 2>&1 & launcher=$!
    else
        timeout 600 "$WEFT" record -o "$WORK/derby.weft" -- "${cmd[@]}" > "$WORK/$mode.out" 2>&1 & launcher=$!
    fi
    for _ in $(seq 240); do
        "$JAVA" -cp "$SCP" org.apache.derby.drda.NetworkServerControl ping -h 127.0.0.1 -p "$PORT" >/dev/null 2>&1 && break
        sleep 0.5
    done
    local out
    out=$(timeout 300 "$JAVA" -cp "$J/derbyclient.jar:$WORK/classes" DerbyClients "$PORT" "$SECS" 2>"$WORK/$mode.clients.err")
    "$JAVA" -cp "$SCP" org.apache.derby.drda.NetworkServerControl shutdown -h 127.0.0.1 -p "$PORT" >/dev/null 2>&1
    wait $launcher; local rc=$?
    t1=$(now)
    local n tot
    n=$(grep -o 'transactions [0-9]*' <<< "$out" | awk '{print $2}')
    tot=$(grep -o 'total [0-9]*' <<< "$out" | awk '{print $2}')
    echo "${n:-0} ${tot:-0} $rc $(elapsed $t0 $t1)"
}
read -r pn pt prc ps < <(serve plain)
rm -f "$WORK"/derby*.weft
read -r rn rt rrc rs < <(serve rec)
check="$pn / $rn transactions in ${SECS} s, money conserved (16000), exit $prc/$rrc"
if [ "$pt" != 16000 ] || [ "$rt" != 16000 ] || [ "$pn" = 0 ] || [ "$rn" = 0 ] || [ "$prc" != "$rrc" ]; then
    check="MISMATCH: plain n=$pn total=$pt rc=$prc / recorded n=$rn total=$rt rc=$rrc"
fi
real_row derby "$check" "$ps" "$rs" "$WORK"/derby*.weft
python3 "$REAL_DIR/expect.py" derby "$WORK"/derby*.weft.json
