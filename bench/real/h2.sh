#!/usr/bin/env bash
# H2 2.1 database server (Debian libh2-java) with its PostgreSQL-protocol
# listener on 127.0.0.1:$H2_PORT, driven by pgbench (postgresql-client-15):
# 4 clients, 2 pgbench threads, a TPC-B-like script for $PGBENCH_SECS seconds.
# pgbench's own init does not work on H2 (CREATE TABLE ... WITH (fillfactor),
# COPY, END), so the tables are made by psql with H2 SQL and the script is
# pgbench's builtin tpcb-like one with COMMIT for END. Check (plain and
# recorded): no failed transaction, pgbench_history holds exactly the number of
# transactions pgbench processed, and the TPC-B invariant holds: sum of account,
# teller and branch balances and of history deltas are all equal. The server
# is stopped with SIGTERM (exit 143 both times).
source "$(dirname "$0")/lib.sh"
need_apt libh2-java postgresql-client-15
PORT="${H2_PORT:-15435}"; SECS="${PGBENCH_SECS:-10}"
export PGPASSWORD=sa PGCONNECT_TIMEOUT=10
PSQL=(psql -q -X -t -A -h 127.0.0.1 -p "$PORT" -U sa -d bench)
cat > "$WORK/tpcb.sql" <<'SQL'
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
COMMIT;
SQL
# serve MODE DIR: prints "processed failed history invariant rc secs"
serve() {
    local mode=$1 dir=$2 launcher jpid t0 t1
    rm -rf "$dir"; mkdir -p "$dir"
    local cmd=("$JAVA" -cp /usr/share/java/h2.jar org.h2.tools.Server -pg -pgPort "$PORT" -baseDir "$dir/db" -ifNotExists)
    t0=$(now)
    if [ "$mode" = plain ]; then
        timeout 300 "${cmd[@]}" > "$dir/out.log" 2>&1 & launcher=$!
    else
        rm -f "$WORK"/h2*.weft
        timeout 300 "$WEFT" record -o "$WORK/h2.weft" -- "${cmd[@]}" > "$dir/out.log" 2>&1 & launcher=$!
    fi
    for _ in $(seq 120); do timeout 5 "${PSQL[@]}" -c "select 1" >/dev/null 2>&1 && break; sleep 0.5; done
    timeout 120 "${PSQL[@]}" > "$dir/init.log" 2>&1 <<'SQL'
create table pgbench_history(tid int,bid int,aid int,delta int,mtime timestamp,filler char(22));
create table pgbench_tellers(tid int not null primary key,bid int,tbalance int,filler char(84));
create table pgbench_accounts(aid int not null primary key,bid int,abalance int,filler char(84));
create table pgbench_branches(bid int not null primary key,bbalance int,filler char(88));
insert into pgbench_branches(bid,bbalance) select "X", 0 from system_range(1, 1);
insert into pgbench_tellers(tid,bid,tbalance) select "X", ("X"-1)/10+1, 0 from system_range(1, 10);
insert into pgbench_accounts(aid,bid,abalance,filler) select "X", ("X"-1)/100000+1, 0, '' from system_range(1, 100000);
SQL
    timeout $((SECS + 60)) pgbench -h 127.0.0.1 -p "$PORT" -U sa -n -c 4 -j 2 -T "$SECS" -f "$WORK/tpcb.sql" bench > "$dir/pgbench.log" 2>&1
    local sums
    sums=$(timeout 60 "${PSQL[@]}" -c "select (select count(*) from pgbench_history) || ' ' || (select sum(abalance) from pgbench_accounts) || ' ' || (select sum(tbalance) from pgbench_tellers) || ' ' || (select sum(bbalance) from pgbench_branches) || ' ' || (select coalesce(sum(delta),0) from pgbench_history)")
    jpid=$(pgrep -f -n -- "-baseDir $dir/db" | head -1)
    kill -TERM "$jpid" 2>/dev/null
    wait $launcher; local rc=$?
    t1=$(now)
    local processed failed hist inv
    processed=$(grep -o 'actually processed: [0-9]*' "$dir/pgbench.log" | awk '{print $NF}')
    failed=$(grep -o 'failed transactions: [0-9]*' "$dir/pgbench.log" | awk '{print $NF}')
    read -r hist a t b d <<< "$sums"
    [ -n "$a" ] && [ "$a" = "$t" ] && [ "$t" = "$b" ] && [ "$b" = "$d" ] && inv=ok || inv="broken($sums)"
    echo "${processed:-none} ${failed:-none} ${hist:-none} $inv $rc $(elapsed $t0 $t1)"
}
read -r pp pf ph pi prc ps < <(serve plain "$WORK/plain")
read -r rp rf rh ri rrc rs < <(serve rec "$WORK/rec")
check="$pp / $rp TPC-B txns in ${SECS}s, 0 failed, history = processed, balances consistent, exit $prc/$rrc"
if [ "$pf" != 0 ] || [ "$rf" != 0 ] || [ "$pp" != "$ph" ] || [ "$rp" != "$rh" ] || [ "$pi" != ok ] || [ "$ri" != ok ] || [ "$prc" != "$rrc" ] || [ "$pp" = 0 ]; then
    check="MISMATCH: plain processed=$pp failed=$pf history=$ph invariant=$pi rc=$prc / rec processed=$rp failed=$rf history=$rh invariant=$ri rc=$rrc"
fi
real_row h2 "$check" "$ps" "$rs" "$WORK"/h2*.weft
python3 "$REAL_DIR/expect.py" h2 "$WORK"/h2*.weft.json
