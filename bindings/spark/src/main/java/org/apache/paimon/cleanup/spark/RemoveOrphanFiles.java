package org.apache.paimon.cleanup.spark;

import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.cleanup.BinaryMerge;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.OrphanConfig;
import org.apache.paimon.cleanup.OrphanUnits;
import org.apache.paimon.cleanup.PaimonCleanupException;
import org.apache.paimon.cleanup.Report;
import org.apache.paimon.cleanup.TableContext;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.storage.StorageLevel;
import scala.Tuple2;

/**
 * Removes the orphan files of a Paimon table (every branch) as a Spark job, with the library's
 * units ({@link OrphanUnits}):
 *
 * <ol>
 *   <li>driver: {@link OrphanUnits#plan} (reads the versions and manifest lists, checks the
 *       cut-off) gives units: "list these directories", "read these manifests";
 *   <li>stage 1 ({@code --parallelism} partitions): the executors execute the units and merge the
 *       partial results of each partition; the partitions' results are merged with {@code
 *       treeReduce} (merge is associative and commutative);
 *   <li>driver: {@link OrphanUnits#decide} applies every safety rule of the single-process run
 *       (cut-off, unreadable metadata aborts, versions appearing meanwhile, the path guard) and
 *       returns delete units (none in a dry run);
 *   <li>stage 2: the executors execute the delete units (each file is checked again before it is
 *       deleted), results merged as in stage 1;
 *   <li>driver: {@link OrphanUnits#finish} removes emptied directories and builds the report,
 *       printed as the CLI's {@code remove-orphan-files} prints it (text, or {@code --json}).
 * </ol>
 *
 * <p>Exit status: 0 done (as the CLI, also when some deletions failed: they are in the report and
 * a later run retries them), 1 the run failed (nothing was deleted if it failed before stage 2; a
 * failure in stage 2 leaves only orphans behind, and a rerun converges), 2 bad arguments. See
 * bindings/spark/README.md for submitting it to a cluster.
 */
public final class RemoveOrphanFiles {
    private RemoveOrphanFiles() {}

    /**
     * Entry point for {@code spark-submit --class org.apache.paimon.cleanup.spark.RemoveOrphanFiles}.
     *
     * @param argv the table and the options (see {@code --help})
     */
    public static void main(String[] argv) {
        int rc = run(argv);
        if (rc != 0) {
            System.exit(rc);
        }
    }

    static void log(String message) {
        System.err.println("remove-orphan-files: " + message);
    }

    /** Parses the arguments, runs the job in a new Spark context, returns the exit status. */
    static int run(String[] argv) {
        JobArgs args;
        try {
            args = JobArgs.parse(argv, System.currentTimeMillis(), ZoneId.systemDefault());
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(JobArgs.USAGE);
            return 2;
        }
        if (args.help) {
            System.out.println(JobArgs.USAGE);
            return 0;
        }
        SparkConf conf = new SparkConf();
        if (!conf.contains("spark.app.name")) {
            conf.setAppName("paimon-cleanup remove-orphan-files");
        }
        try (JavaSparkContext jsc = new JavaSparkContext(conf)) {
            return run(jsc, args);
        }
    }

    /** Runs the job on {@code jsc}; returns the exit status (0 or 1). */
    static int run(JavaSparkContext jsc, JobArgs args) {
        SparkConf conf = jsc.getConf();
        try {
            Executor exec = UnitRunner.executor(conf);
            log("native library " + NativeLibrary.describe());
            OrphanConfig config = new OrphanConfig()
                    .dryRun(args.dryRun)
                    .noWritersRunning(args.noWritersRunning)
                    .externalRootsOwned(args.externalRootsOwned);
            if (args.olderThanMs != null) {
                config.olderThanMs(args.olderThanMs.longValue());
            }
            Map<String, String> driverOptions = UnitRunner.hostOptions(conf, args.options);
            try (TableContext table = new TableContext(args.table, driverOptions)) {
                long t0 = System.nanoTime();
                OrphanUnits.Plan plan = OrphanUnits.plan(table, exec, config, null);
                log(String.format("plan: %d units (%d ms)", plan.units().size(), ms(t0)));

                int parallelism = args.parallelism > 0 ? args.parallelism : jsc.defaultParallelism();
                int shards = args.shards > 0 ? args.shards : Math.max(1, parallelism);
                long t1 = System.nanoTime();
                Sharded sharded = planStage(jsc, plan.units(), args, shards);
                log(String.format("plan units executed, split into %d shards and shuffled; "
                        + "summary %d bytes (%d ms)", shards, sharded.summary.length, ms(t1)));

                long t2 = System.nanoTime();
                byte[] decision = decideShards(jsc, table, exec, args, plan.state(), sharded, shards);
                log(String.format("decide: %d shards (%d ms); driver %s", shards, ms(t2),
                        memory()));

                long t3 = System.nanoTime();
                byte[] deletes = deleteStage(jsc, sharded.decided, args, parallelism);
                log(String.format("delete units executed and merged (%d ms); driver %s", ms(t3),
                        memory()));
                sharded.release();

                Report report = OrphanUnits.finish(table, exec, null, decision, deletes);
                System.out.print(ReportText.render(report.json(), args.json));
                System.out.flush();
                return 0;
            }
        } catch (PaimonCleanupException e) {
            System.err.println("error: " + e.getMessage());
            return 1;
        } catch (UnsatisfiedLinkError e) {
            System.err.println("error: cannot load the native library (" + NativeLibrary.describe()
                    + "): " + e.getMessage() + "; ship it with spark-submit --files "
                    + "<dir>/" + NativeLibrary.fileName() + " (see bindings/spark/README.md)");
            return 1;
        } catch (RuntimeException e) {
            // A failed Spark job (a task failed more often than spark.task.maxFailures allows).
            System.err.println("error: " + e);
            return 1;
        }
    }

    /**
     * The driver JVM's heap in use and its process's resident set (now and peak, from
     * /proc/self/status where there is one), for the scale benchmark.
     */
    static String memory() {
        Runtime rt = Runtime.getRuntime();
        long heap = (rt.totalMemory() - rt.freeMemory()) >> 20;
        String rss = "";
        try {
            for (String line : java.nio.file.Files.readAllLines(
                    java.nio.file.Paths.get("/proc/self/status"))) {
                if (line.startsWith("VmRSS:") || line.startsWith("VmHWM:")) {
                    String[] f = line.trim().split("\\s+");
                    rss += String.format(", %s %d MB", f[0].replace(":", ""),
                            Long.parseLong(f[1]) >> 10);
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            rss = "";
        }
        return String.format("heap used %d MB of %d MB max%s", heap, rt.maxMemory() >> 20, rss);
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000L;
    }

    /** What the plan stage leaves: the merged summary and the shuffled pieces, by shard. */
    static final class Sharded {
        byte[] summary;
        JavaPairRDD<Integer, byte[]> parts;
        JavaPairRDD<Integer, byte[]> pieces;
        JavaRDD<UnitRunner.Decided> decided;

        void release() {
            if (parts != null) {
                parts.unpersist(false);
            }
            if (pieces != null) {
                pieces.unpersist(false);
            }
            if (decided != null) {
                decided.unpersist(false);
            }
        }
    }

    /**
     * The plan units as a stage: each Spark partition executes its units, merges their results
     * and splits the merge into a summary and one piece per shard; the summaries are merged to
     * the driver (they hold counters, failures and empty directories, not candidates or keys)
     * and the pieces are shuffled by shard (groupByKey: one Spark partition per shard, each
     * with every unit's piece of its shard, merged there by {@link BinaryMerge}: a running
     * merge, as reduceByKey's, would cost a pass over the growing shard per piece).
     */
    static Sharded planStage(JavaSparkContext jsc, List<byte[]> units, JobArgs args, int shards) {
        Sharded out = new Sharded();
        Map<String, String> options = new HashMap<>(args.options);
        if (units.isEmpty()) {
            List<Tuple2<Integer, byte[]>> empty = new ArrayList<>(shards);
            for (int i = 0; i < shards; i++) {
                empty.add(new Tuple2<>(i, new byte[0]));
            }
            out.summary = new byte[0];
            out.pieces = jsc.parallelizePairs(empty, shards);
            return out;
        }
        int wanted = args.parallelism > 0 ? args.parallelism : jsc.defaultParallelism();
        int slices = Math.max(1, Math.min(units.size(), wanted));
        jsc.setJobDescription("plan units (" + units.size() + "), split into " + shards + " shards");
        final int k = shards;
        out.parts = jsc.parallelize(UnitRunner.number(units), slices)
                .mapPartitionsToPair(it -> UnitRunner.executeAndSplit(it, options, k))
                // On local disk, not in the heap: the pieces are every reference key and
                // candidate (in the heap they filled 1 GB executors at 50 M references).
                .persist(StorageLevel.DISK_ONLY());
        out.summary = out.parts.filter(kv -> kv._1() == UnitRunner.SUMMARY).values()
                .treeReduce(UnitRunner::merge);
        jsc.setJobDescription("shuffle the pieces by shard (" + shards + ")");
        out.pieces = out.parts.filter(kv -> kv._1() != UnitRunner.SUMMARY)
                .groupByKey(new HashPartitioner(shards))
                .mapValues(pieces -> BinaryMerge.all(pieces, UnitRunner::merge))
                // Each round of the decision reads them again; from local disk, for the same
                // reason.
                .persist(StorageLevel.DISK_ONLY());
        return out;
    }

    /**
     * The sharded decision: the gate on the driver (re-lists the versions, judges unreadable
     * metadata), one task per shard deciding its own files, the gate again; while it finds new
     * versions the shards decide again with the new gate. Returns the concluded decision; the
     * delete units stay with the shards' results ({@code sharded.decided}).
     */
    static byte[] decideShards(JavaSparkContext jsc, TableContext table, Executor exec,
            JobArgs args, byte[] state, Sharded sharded, int shards) {
        Map<String, String> options = new HashMap<>(args.options);
        String uri = args.table;
        OrphanUnits.Gated gated = OrphanUnits.gate(table, exec, null, state, sharded.summary, shards);
        List<byte[]> reports = new ArrayList<>();
        int round = 0;
        while (gated.decide()) {
            if (sharded.decided != null) {
                sharded.decided.unpersist(false);
            }
            Broadcast<byte[]> gate = jsc.broadcast(gated.gate());
            jsc.setJobDescription("decide " + shards + " shards (round " + round + ")");
            sharded.decided = sharded.pieces
                    .map(kv -> UnitRunner.decideShard(uri, options, gate.value(), kv._1(), kv._2()))
                    .persist(StorageLevel.MEMORY_AND_DISK_SER());
            reports = sharded.decided.map(d -> d.report).collect();
            gated = OrphanUnits.gate(table, exec, null, gated.state(), sharded.summary, shards);
            if (gated.decide()) {
                log("new versions appeared while the shards decided: the shards decide again");
            }
            round++;
        }
        return OrphanUnits.conclude(gated.state(), sharded.summary, reports);
    }

    /** The delete units of every shard, numbered, executed and their results merged. */
    static byte[] deleteStage(JavaSparkContext jsc, JavaRDD<UnitRunner.Decided> decided,
            JobArgs args, int parallelism) {
        if (decided == null) {
            return new byte[0];
        }
        Map<String, String> options = new HashMap<>(args.options);
        JavaRDD<byte[]> units = decided.flatMap(d -> d.units.iterator());
        long n = units.count();
        if (n == 0) {
            return new byte[0];
        }
        int slices = (int) Math.max(1, Math.min(n, parallelism));
        jsc.setJobDescription("delete units (" + n + ")");
        return units.zipWithIndex()
                .map(t -> new UnitRunner.Unit((int) t._2().longValue(), t._1()))
                .repartition(slices)
                .mapPartitions(it -> UnitRunner.executePartition("delete", it, options))
                .treeReduce(UnitRunner::merge);
    }

}
