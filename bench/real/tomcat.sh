#!/usr/bin/env bash
# Tomcat 10 (Debian tomcat10-common + tomcat10-examples) serving the examples
# webapp on 127.0.0.1:$TOMCAT_PORT only, loaded by wrk for $WRK_SECS seconds
# (HelloWorldExample servlet, 2 threads, 16 connections), then stopped with
# SIGTERM (shutdown hooks run, the agent sees VMDeath). Check (plain and
# recorded): wrk saw no non-2xx response and no socket error, Tomcat's access
# log has wrk's request count + 1 warm-up (+ at most 16 still in flight when
# wrk stopped counting) lines with status 200, the
# servlet's page is the same, and the JVM exits 143 (SIGTERM) both times.
# Expected findings: bench/real/expected.json (checked by expect.py).
source "$(dirname "$0")/lib.sh"
need_apt tomcat10-common tomcat10-examples wrk curl
PORT="${TOMCAT_PORT:-18080}"; SECS="${WRK_SECS:-5}"
T=/usr/share/tomcat10
URL="http://127.0.0.1:$PORT/examples/servlets/servlet/HelloWorldExample"
base() { # DIR: a private CATALINA_BASE
    rm -rf "$1"; mkdir -p "$1"/{conf,logs,webapps,work,temp}
    cat > "$1/conf/server.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector port="$PORT" address="127.0.0.1" protocol="HTTP/1.1" maxThreads="32" connectionTimeout="20000"/>
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false" deployOnStartup="false">
        <Context path="/examples" docBase="/usr/share/tomcat10-examples/examples"/>
        <Valve className="org.apache.catalina.valves.AccessLogValve" directory="logs" prefix="access" suffix=".log" pattern="%s %b %U"/>
      </Host>
    </Engine>
  </Service>
</Server>
XML
}
# serve MODE DIR: start Tomcat (plain or under weft record), load it, stop it; prints "reqs non2xx errors 200s page-md5 rc secs".
serve() {
    local mode=$1 dir=$2 launcher jpid t0 t1
    base "$dir"
    local cmd=("$JAVA" -Dcatalina.home=$T -Dcatalina.base="$dir" -Djava.io.tmpdir="$dir/temp"
               -cp $T/bin/bootstrap.jar:$T/bin/tomcat-juli.jar org.apache.catalina.startup.Bootstrap start)
    t0=$(now)
    if [ "$mode" = plain ]; then
        timeout 300 "${cmd[@]}" > "$dir/out.log" 2>&1 & launcher=$!
    else
        rm -f "$WORK"/tomcat*.weft
        timeout 300 "$WEFT" record -o "$WORK/tomcat.weft" -- "${cmd[@]}" > "$dir/out.log" 2>&1 & launcher=$!
    fi
    for _ in $(seq 240); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.5; done
    curl -s "$URL" | md5sum | cut -c1-8 > "$dir/page"
    timeout $((SECS + 30)) wrk -t2 -c16 -d"${SECS}s" "$URL" > "$dir/wrk.log" 2>&1
    # The JVM: the timeout's java child (plain), or weft's java child (recorded).
    jpid=$(pgrep -f -n "catalina.base=$dir" | head -1)
    kill -TERM "$jpid" 2>/dev/null
    wait $launcher; local rc=$?
    t1=$(now)
    local reqs non errs ok
    reqs=$(grep -o '^ *[0-9]* requests in' "$dir/wrk.log" | awk '{print $1}')
    non=$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$dir/wrk.log" | awk '{print $NF}'); non=${non:-0}
    errs=$(grep -c 'Socket errors' "$dir/wrk.log")
    ok=$(grep -c '^200 .*HelloWorldExample' "$dir"/logs/access*.log)
    echo "$reqs $non $errs $ok $(cat "$dir/page") $rc $(elapsed $t0 $t1)"
}
read -r pr pn pe po pp prc ps < <(serve plain "$WORK/plain")
read -r rr rn re ro rp rrc rs < <(serve rec "$WORK/rec")
# wrk does not count the responses still in flight at its deadline (at most one per connection).
check="$((pr / SECS)) / $((rr / SECS)) req/s, access-log 200s = wrk's count (+≤16 in flight), non-2xx 0, same page, exit $prc/$rrc"
inrange() { [ "$2" -ge $(($1 + 1)) ] && [ "$2" -le $(($1 + 17)) ]; }
if [ "$pn$pe$rn$re" != "0000" ] || ! inrange "$pr" "$po" || ! inrange "$rr" "$ro" || [ "$pp" != "$rp" ] || [ "$prc" != "$rrc" ]; then
    check="MISMATCH: plain reqs=$pr non2xx=$pn sockerr=$pe log200=$po page=$pp rc=$prc / rec reqs=$rr non2xx=$rn sockerr=$re log200=$ro page=$rp rc=$rrc"
fi
real_row tomcat "$check" "$ps" "$rs" "$WORK"/tomcat*.weft
python3 "$REAL_DIR/expect.py" tomcat "$WORK"/tomcat*.weft.json
