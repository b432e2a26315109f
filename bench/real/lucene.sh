#!/usr/bin/env bash
# Lucene 8.7 benchmark module (Debian liblucene8-java, libicu4j-java): lucene.alg
# indexes 10,000 generated documents with 4 threads, force-merges, then runs
# 4,000 searches with 4 threads. Check (plain and recorded): the run ends with
# "D O N E", AddDoc ran 10000 times and Search 4000 times, and Lucene's own
# CheckIndex finds no problem and maxDoc=10000 in the resulting index.
source "$(dirname "$0")/lib.sh"
need_apt liblucene8-java libicu4j-java
J=/usr/share/java
CP=$(ls $J/lucene-*-8.7.0.jar | tr '\n' ':')$J/icu4j.jar
cd "$WORK"
check_run() { # LOG DIR -> "adddoc/search/maxDoc/ok"
    local a s m ok
    a=$(grep -E '^AddDoc ' "$1" | tr -s ' -' ' ' | awk '{print $3}' | tr -d ,)
    s=$(grep -E '^Search ' "$1" | tr -s ' -' ' ' | awk '{print $3}' | tr -d ,)
    m=$(timeout 120 "$JAVA" -cp $J/lucene-core-8.7.0.jar org.apache.lucene.index.CheckIndex "$2/index" 2>&1 | tee "$2.check" | grep -o 'maxDoc=[0-9]*' | head -1)
    grep -q "No problems were detected" "$2.check" && ok=clean || ok=PROBLEMS
    grep -q "D O N E" "$1" || ok="$ok,not-done"
    echo "AddDoc=$a Search=$s $m $ok"
}
sed "s|^directory=FSDirectory|directory=FSDirectory\nwork.dir=$WORK/plain|" "$REAL_DIR/lucene.alg" > plain.alg
sed "s|^directory=FSDirectory|directory=FSDirectory\nwork.dir=$WORK/rec|" "$REAL_DIR/lucene.alg" > rec.alg
t0=$(now); plain 600 "$JAVA" -cp "$CP" org.apache.lucene.benchmark.byTask.Benchmark plain.alg > plain.log 2>&1; rc=$?; t1=$(now)
t2=$(now); record 600 "$WORK/lucene.weft" "$JAVA" -cp "$CP" org.apache.lucene.benchmark.byTask.Benchmark rec.alg > rec.log 2>&1; rrc=$?; t3=$(now)
p=$(check_run plain.log "$WORK/plain"); r=$(check_run rec.log "$WORK/rec")
check="$r, exit $rc/$rrc"
[ "$p" = "$r" ] && [ "$p" = "AddDoc=10000 Search=4000 maxDoc=10000 clean" ] && [ $rc = 0 ] && [ $rrc = 0 ] || check="MISMATCH: plain $p / rec $check"
real_row lucene "$check" "$(elapsed $t0 $t1)" "$(elapsed $t2 $t3)" "$WORK"/lucene*.weft
python3 "$REAL_DIR/expect.py" lucene "$WORK"/lucene*.weft.json
