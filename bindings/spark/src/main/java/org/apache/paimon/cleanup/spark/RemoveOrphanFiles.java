package org.apache.paimon.cleanup.spark;

import java.time.ZoneId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.OrphanConfig;
import org.apache.paimon.cleanup.OrphanUnits;
import org.apache.paimon.cleanup.PaimonCleanupException;
import org.apache.paimon.cleanup.Report;
import org.apache.paimon.cleanup.TableContext;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;

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

                long t1 = System.nanoTime();
                byte[] merged = stage(jsc, "plan", plan.units(), args);
                log(String.format("plan units executed and merged: %d bytes (%d ms)",
                        merged.length, ms(t1)));

                long t2 = System.nanoTime();
                OrphanUnits.Decision decision =
                        OrphanUnits.decide(table, exec, config, null, plan.state(), merged);
                merged = null;
                log(String.format("decide: %d delete units (%d ms)",
                        decision.deleteUnits().size(), ms(t2)));

                long t3 = System.nanoTime();
                byte[] deletes = stage(jsc, "delete", decision.deleteUnits(), args);
                log(String.format("delete units executed and merged (%d ms)", ms(t3)));

                Report report = OrphanUnits.finish(table, exec, null, decision.decision(), deletes);
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

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000L;
    }

    /**
     * Executes {@code units} on the executors, {@code --parallelism} partitions, and returns their
     * merged partial result (an empty array, the neutral element, when there are none).
     */
    static byte[] stage(JavaSparkContext jsc, String stage, List<byte[]> units, JobArgs args) {
        if (units.isEmpty()) {
            return new byte[0];
        }
        int wanted = args.parallelism > 0 ? args.parallelism : jsc.defaultParallelism();
        int slices = Math.max(1, Math.min(units.size(), wanted));
        Map<String, String> options = new HashMap<>(args.options);
        jsc.setJobDescription(stage + " units (" + units.size() + ")");
        JavaRDD<UnitRunner.Unit> rdd = jsc.parallelize(UnitRunner.number(units), slices);
        return rdd.mapPartitions(it -> UnitRunner.executePartition(stage, it, options))
                .treeReduce(UnitRunner::merge);
    }
}
