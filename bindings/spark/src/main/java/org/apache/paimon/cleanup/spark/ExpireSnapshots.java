package org.apache.paimon.cleanup.spark;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.cleanup.BinaryMerge;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.ExpiryUnits;
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
 * Expires the old snapshots of a Paimon table branch as a Spark job, with the library's units
 * ({@link ExpiryUnits}); the result is the CLI's {@code expire-snapshots}:
 *
 * <ol>
 *   <li>driver: {@link ExpiryUnits#plan} (retention, the range to expire) gives the candidate
 *       units, each a slice of the expired range's delta and changelog manifest lists;
 *   <li>stage 1: the executors read them and return the files they free (merged with {@code
 *       treeReduce});
 *   <li>driver: {@link ExpiryUnits#protect} reads every version that protects files and gives the
 *       protect units; stage 2: the executors read the protectors' manifests;
 *   <li>driver: {@link ExpiryUnits#decide} builds and checks the deletion plan and gives delete
 *       units (data and changelog files; none in a dry run); stage 3: the executors delete;
 *   <li>driver: {@link ExpiryUnits#finish} deletes the manifests, lists and snapshot files and
 *       writes the hint, in the crash-safe order, and prints the report as the CLI does.
 * </ol>
 *
 * <p>With {@code --shards K} the decision is split by shard so that the driver never holds every
 * candidate: each partition of the candidate stage splits its merged result into a summary (to
 * the driver) and K pieces, shuffled by shard ({@code groupByKey}, each shard's pieces merged
 * there by {@link BinaryMerge}); the driver's {@link
 * ExpiryUnits#gate} reads what protects files (snapshots and tags, not files) and every shard
 * task decides its own files ({@link ExpiryUnits#decideShard}); the executors run the shards'
 * delete units, and the driver concludes with the shards' reports and finishes as above.

 * With {@code --report-dir DIR} no path travels to the driver: the gate hands the freed paths to
 * the tasks ({@link ExpiryUnits#gate(TableContext, Executor, RunOptions, byte[], byte[], int,
 * boolean)}), every delete unit's task writes the paths it deleted to {@code DIR/unit-<i>.txt}
 * (in a dry run every shard task writes the paths it would delete to {@code DIR/shard-<k>.txt}),
 * and the shard reports and delete results carry counts per class, every failure and a sample.
 * The driver writes the paths its report lists (the metadata files it deleted itself and the
 * sample) to {@value #PATHS_FILE} and prints the counts, the sample and the directory. {@code DIR}
 * must be a directory every executor can write (local mode, or a shared file system).
 *
 * <p>Exit status: 0 done, 1 the run failed (nothing is deleted before stage 3; a failure in stage
 * 3 leaves every remaining version whole, the metadata of the expired snapshots stays, and a rerun
 * converges), 2 bad arguments.
 */
public final class ExpireSnapshots {
    private ExpireSnapshots() {}

    /**
     * Entry point for {@code spark-submit --class org.apache.paimon.cleanup.spark.ExpireSnapshots}.
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
        System.err.println("expire-snapshots: " + message);
    }

    /** Parses the arguments, runs the job in a new Spark context, returns the exit status. */
    static int run(String[] argv) {
        long now = System.currentTimeMillis();
        ExpireArgs args;
        try {
            args = ExpireArgs.parse(argv, now);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(ExpireArgs.USAGE);
            return 2;
        }
        if (args.help) {
            System.out.println(ExpireArgs.USAGE);
            return 0;
        }
        SparkConf conf = new SparkConf();
        if (!conf.contains("spark.app.name")) {
            conf.setAppName("paimon-cleanup expire-snapshots");
        }
        try (JavaSparkContext jsc = new JavaSparkContext(conf)) {
            try {
                UnitRunner.executor(conf);
                args.resolve(now);
            } catch (IllegalArgumentException e) {
                System.err.println("error: " + e.getMessage());
                System.err.println(ExpireArgs.USAGE);
                return 2;
            } catch (UnsatisfiedLinkError e) {
                return cannotLoad(e);
            }
            return run(jsc, args);
        }
    }

    private static int cannotLoad(UnsatisfiedLinkError e) {
        System.err.println("error: cannot load the native library (" + NativeLibrary.describe()
                + "): " + e.getMessage() + "; ship it with spark-submit --files "
                + "<dir>/" + NativeLibrary.fileName() + " (see bindings/spark/README.md)");
        return 1;
    }

    /** Runs the job on {@code jsc}; returns the exit status (0 or 1). */
    static int run(JavaSparkContext jsc, ExpireArgs args) {
        SparkConf conf = jsc.getConf();
        try {
            Executor exec = UnitRunner.executor(conf);
            log("native library " + NativeLibrary.describe());
            Map<String, String> driverOptions = UnitRunner.hostOptions(conf, args.options);
            TableContext table = args.branch == null
                    ? new TableContext(args.table, driverOptions)
                    : TableContext.onBranch(args.table, args.branch, driverOptions);
            try {
                long t0 = System.nanoTime();
                ExpiryUnits.Step plan = ExpiryUnits.plan(table, exec, args.config(), null);
                log(String.format("plan: %d candidate units (%d ms)", plan.units().size(), ms(t0)));
                if (args.shards > 0) {
                    return sharded(jsc, table, exec, args, plan);
                }
                byte[] candidates = stage(jsc, "candidates", plan.units(), args);

                long t1 = System.nanoTime();
                ExpiryUnits.Step protect = ExpiryUnits.protect(table, exec, null, plan.state(), candidates);
                log(String.format("protect: %d protect units (%d ms)", protect.units().size(), ms(t1)));
                byte[] protectedKeys = stage(jsc, "protect", protect.units(), args);

                long t2 = System.nanoTime();
                ExpiryUnits.Step decision =
                        ExpiryUnits.decide(table, exec, null, protect.state(), candidates, protectedKeys);
                candidates = null;
                log(String.format("decide: %d delete units (%d ms)", decision.units().size(), ms(t2)));
                byte[] deletes = stage(jsc, "delete", decision.units(), args);

                Report report = ExpiryUnits.finish(table, exec, null, decision.state(), deletes);
                System.out.print(ExpireReportText.renderExpiry(report.json(), args.json));
                System.out.flush();
                return 0;
            } finally {
                table.close();
            }
        } catch (PaimonCleanupException e) {
            System.err.println("error: " + e.getMessage());
            return 1;
        } catch (UnsatisfiedLinkError e) {
            return cannotLoad(e);
        } catch (RuntimeException e) {
            // A failed Spark job (a task failed more often than spark.task.maxFailures allows).
            System.err.println("error: " + e);
            return 1;
        }
    }

    /** The sharded run after the plan: candidates split and shuffled, shards decided, deletes. */
    private static int sharded(JavaSparkContext jsc, TableContext table, Executor exec, ExpireArgs args,
            ExpiryUnits.Step plan) {
        int shards = args.shards;
        int parallelism = args.parallelism > 0 ? args.parallelism : jsc.defaultParallelism();
        Map<String, String> options = new HashMap<>(args.options);
        JavaPairRDD<Integer, byte[]> parts = null;
        JavaPairRDD<Integer, byte[]> pieces;
        JavaRDD<UnitRunner.Decided> decided = null;
        List<String> sample = new ArrayList<>(ExpireReportText.SAMPLE);
        try {
            long t1 = System.nanoTime();
            byte[] summary;
            if (plan.units().isEmpty()) {
                List<Tuple2<Integer, byte[]>> empty = new ArrayList<>(shards);
                for (int i = 0; i < shards; i++) {
                    empty.add(new Tuple2<>(i, new byte[0]));
                }
                summary = new byte[0];
                pieces = jsc.parallelizePairs(empty, shards);
            } else {
                int slices = Math.max(1, Math.min(plan.units().size(), parallelism));
                final int k = shards;
                jsc.setJobDescription("expire-snapshots: candidate units (" + plan.units().size()
                        + "), split into " + shards + " shards");
                parts = jsc.parallelize(UnitRunner.number(plan.units()), slices)
                        .mapPartitionsToPair(it -> ExpiryUnitRunner.executeAndSplit(it, options, k))
                        // On local disk, not in the heap: the pieces are every candidate, and
                        // held in the heap they leave the shard's merge no room (2 GB
                        // executors ran out at 50 M references).
                        .persist(StorageLevel.DISK_ONLY());
                summary = parts.filter(kv -> kv._1() == UnitRunner.SUMMARY).values()
                        .treeReduce(ExpiryUnitRunner::merge);
                pieces = parts.filter(kv -> kv._1() != UnitRunner.SUMMARY)
                        .groupByKey(new HashPartitioner(shards))
                        .mapValues(ps -> BinaryMerge.all(ps, ExpiryUnitRunner::merge));
            }
            log(String.format("candidate units executed, split into %d shards and shuffled; "
                    + "summary %d bytes (%d ms)", shards, summary.length, ms(t1)));

            long t2 = System.nanoTime();
            final String pathsDir = args.reportDir;
            if (pathsDir != null) {
                clearPathFiles(pathsDir);
            }
            ExpiryUnits.Gated gated =
                    ExpiryUnits.gate(table, exec, null, plan.state(), summary, shards, pathsDir != null);
            Broadcast<byte[]> gate = jsc.broadcast(gated.gate());
            jsc.setJobDescription("expire-snapshots: decide " + shards + " shards");
            decided = pieces
                    .map(kv -> ExpiryUnitRunner.decideShard(options, gate.value(), kv._1(), kv._2(), pathsDir))
                    .persist(StorageLevel.MEMORY_AND_DISK_SER());
            List<byte[]> reports = decided.map(d -> d.report).collect();
            byte[] decision = ExpiryUnits.conclude(gated.decision(), reports);
            reports = null; // the shards' reports are in the decision now
            log(String.format("decide: %d shards (%d ms); driver %s", shards, ms(t2),
                    RemoveOrphanFiles.memory()));

            long t3 = System.nanoTime();
            byte[] deletes = deleteStage(jsc, decided, options, parallelism, pathsDir);
            log(String.format("delete units executed and merged (%d ms)", ms(t3)));

            Report report = ExpiryUnits.finish(table, exec, null, decision, deletes);
            if (args.reportDir == null) {
                System.out.print(ExpireReportText.renderExpiry(report.json(), args.json));
            } else {
                String file = writePaths(report, args.reportDir, sample);
                System.out.print(ExpireReportText.renderSummary(report, sample, file, args.reportDir, args.json));
            }
            System.out.flush();
            return 0;
        } finally {
            if (parts != null) {
                parts.unpersist(false);
            }
            if (decided != null) {
                decided.unpersist(false);
            }
        }
    }

    /**
     * Name of the driver's path listing under {@code --report-dir}: the paths its report lists
     * (the metadata files the driver deleted and the sample of the tasks' paths).
     */
    static final String PATHS_FILE = "driver-paths.txt";

    /** Removes the path listings of an earlier run from {@code dir} (nothing else). */
    static void clearPathFiles(String dir) {
        Path d = Paths.get(dir);
        if (!Files.isDirectory(d)) {
            return;
        }
        try (java.util.stream.Stream<Path> all = Files.list(d)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                String n = p.getFileName().toString();
                if (n.equals(PATHS_FILE) || ((n.startsWith("unit-") || n.startsWith("shard-"))
                        && n.endsWith(".txt"))) {
                    Files.delete(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clear the path listings under " + dir, e);
        }
    }

    /**
     * Writes every path of {@code report} (one a line, in deletion order) to {@link #PATHS_FILE}
     * under {@code dir}, streaming them out of the report, and keeps the first ones in {@code
     * sample}; returns the file's path.
     */
    static String writePaths(Report report, String dir, final List<String> sample) {
        try {
            Path d = Paths.get(dir);
            Files.createDirectories(d);
            Path file = d.resolve(PATHS_FILE);
            Path tmp = d.resolve(PATHS_FILE + ".tmp");
            try (BufferedWriter w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                report.forEachPath(p -> {
                    if (sample.size() < ExpireReportText.SAMPLE) {
                        sample.add(p.path());
                    }
                    try {
                        w.write(p.path());
                        w.write('\n');
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            log(String.format("%d paths written to %s", report.pathCount(), file));
            return file.toString();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the path listing under " + dir, e);
        }
    }

    /** Every shard's delete units, numbered, executed on the executors and their results merged. */
    private static byte[] deleteStage(JavaSparkContext jsc, JavaRDD<UnitRunner.Decided> decided,
            Map<String, String> options, int parallelism, String pathsDir) {
        JavaRDD<byte[]> units = decided.flatMap(d -> d.units.iterator());
        long n = units.count();
        if (n == 0) {
            return new byte[0];
        }
        int slices = (int) Math.max(1, Math.min(n, parallelism));
        jsc.setJobDescription("expire-snapshots: delete units (" + n + ")");
        return units.zipWithIndex()
                .map(t -> new UnitRunner.Unit((int) t._2().longValue(), t._1()))
                .repartition(slices)
                .mapPartitions(it -> ExpiryUnitRunner.executePartition("delete", it, options, pathsDir))
                .treeReduce(ExpiryUnitRunner::merge);
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000L;
    }

    /** Executes {@code units} on the executors and returns their merged partial result. */
    static byte[] stage(JavaSparkContext jsc, String stage, List<byte[]> units, ExpireArgs args) {
        if (units.isEmpty()) {
            return new byte[0];
        }
        int wanted = args.parallelism > 0 ? args.parallelism : jsc.defaultParallelism();
        int slices = Math.max(1, Math.min(units.size(), wanted));
        Map<String, String> options = new HashMap<>(args.options);
        jsc.setJobDescription("expire-snapshots: " + stage + " units (" + units.size() + ")");
        JavaRDD<UnitRunner.Unit> rdd = jsc.parallelize(UnitRunner.number(units), slices);
        return rdd.mapPartitions(it -> ExpiryUnitRunner.executePartition(stage, it, options))
                .treeReduce(ExpiryUnitRunner::merge);
    }
}
