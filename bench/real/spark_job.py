# bench/real/spark.sh: a Spark SQL job in local mode, all of its work in the JVM
# (DataFrame operations, no Python UDF). Prints one checksum line.
import sys
from pyspark.sql import SparkSession, functions as F

spark = (SparkSession.builder.master(sys.argv[1] if len(sys.argv) > 1 else "local[2]")
         .appName("weft-real").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "8").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
df = spark.range(0, 3_000_000).select((F.col("id") % 97).alias("k"), (F.col("id") * 7 % 1009).alias("v"))
agg = df.groupBy("k").agg(F.sum("v").alias("s"), F.count("*").alias("n")).orderBy("k")
rows = agg.collect()
joined = agg.alias("a").join(df.groupBy("k").agg(F.max("v").alias("m")).alias("b"), "k").agg(F.sum(F.col("s") - F.col("m"))).collect()[0][0]
print("SPARK-CHECK groups=%d sum=%d n=%d joined=%d" % (len(rows), sum(r["s"] for r in rows), sum(r["n"] for r in rows), joined))
spark.stop()
