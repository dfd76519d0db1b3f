package org.apache.paimon.cleanup.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.paimon.cleanup.BinaryMerge;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.OrphanConfig;
import org.apache.paimon.cleanup.OrphanUnits;
import org.apache.paimon.cleanup.TableContext;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import scala.Tuple2;

/**
 * What runs inside the Spark tasks: executes units with one library {@link Executor} per JVM and
 * merges their partial results. Everything here is static (nothing native is serialized); a task
 * receives only unit bytes and the host options.
 */
final class UnitRunner {
    /**
     * Fault injection for the tests (scripts/test-spark.sh), read in the task: {@code
     * <stage>:<index>} makes the task of unit {@code index} of stage {@code plan} (before executing
     * it) or {@code delete} (after executing it, so its deletions happened but its result is
     * lost) throw, in every attempt; {@code <stage>:<index>:once} only in the task's first attempt
     * (a transient failure that Spark's retry, {@code spark.task.maxFailures}, gets past). On a
     * cluster, set it with {@code spark.executorEnv.}; unset, nothing happens.
     */
    static final String FAIL_ENV = "PAIMON_CLEANUP_SPARK_FAIL_UNIT";

    /** Spark configuration key: worker threads of the library in each JVM (0 = one per CPU). */
    static final String THREADS_CONF = "spark.paimon.cleanup.workerThreads";

    /** Prefix of the Spark configuration keys forwarded as options (Spark's Hadoop convention). */
    static final String HADOOP_PREFIX = "spark.hadoop.";

    private static Executor executor;

    private UnitRunner() {}

    /** One unit of a stage with its position, so a failure can name it. */
    static final class Unit implements Serializable {
        private static final long serialVersionUID = 1L;
        final int index;
        final byte[] bytes;

        Unit(int index, byte[] bytes) {
            this.index = index;
            this.bytes = bytes;
        }
    }

    /** Numbers the units of a stage. */
    static List<Unit> number(List<byte[]> units) {
        List<Unit> out = new ArrayList<>(units.size());
        for (int i = 0; i < units.size(); i++) {
            out.add(new Unit(i, units.get(i)));
        }
        return out;
    }

    /** The library executor of this JVM (created on first use, closed at JVM exit). */
    static synchronized Executor executor(SparkConf conf) {
        if (executor == null) {
            NativeLibrary.prepare();
            int threads = conf == null ? 0 : conf.getInt(THREADS_CONF, 0);
            final Executor e = new Executor(threads);
            Runtime.getRuntime().addShutdownHook(new Thread(e::close, "paimon-cleanup-executor-close"));
            executor = e;
        }
        return executor;
    }

    /**
     * The options every JVM adds to a unit's own: the Spark configuration's {@code spark.hadoop.*}
     * keys (prefix removed) of this JVM, then {@code explicit} (the job's {@code -o}), which win.
     */
    static Map<String, String> hostOptions(SparkConf conf, Map<String, String> explicit) {
        Map<String, String> out = new HashMap<>();
        if (conf != null) {
            for (scala.Tuple2<String, String> kv : conf.getAllWithPrefix(HADOOP_PREFIX)) {
                out.put(kv._1(), kv._2());
            }
        }
        out.putAll(explicit);
        return out;
    }

    private static void maybeFail(String stage, Unit unit) {
        String spec = System.getenv(FAIL_ENV);
        if (spec == null) {
            return;
        }
        String target = stage + ":" + unit.index;
        TaskContext tc = TaskContext.get();
        boolean firstAttempt = tc == null || tc.attemptNumber() == 0;
        if (spec.equals(target) || (spec.equals(target + ":once") && firstAttempt)) {
            throw new IllegalStateException("injected failure (" + FAIL_ENV + "=" + spec + ") in "
                    + stage + " unit " + unit.index);
        }
    }

    /**
     * Executes the units of one partition and merges their results, keeping at most one partial
     * result per power of two of units (a binary counter), so merging costs O(n log n) bytes.
     */
    static Iterator<byte[]> executePartition(
            String stage, Iterator<Unit> units, Map<String, String> explicitOptions) {
        SparkEnv env = SparkEnv.get();
        SparkConf conf = env == null ? null : env.conf();
        Executor exec = executor(conf);
        Map<String, String> options = hostOptions(conf, explicitOptions);
        BinaryMerge merged = new BinaryMerge(OrphanUnits::merge);
        while (units.hasNext()) {
            TaskContext tc = TaskContext.get();
            if (tc != null && tc.isInterrupted()) {
                throw new IllegalStateException("task killed");
            }
            Unit unit = units.next();
            if (stage.equals("plan")) {
                maybeFail(stage, unit);
            }
            byte[] partial = OrphanUnits.execute(exec, unit.bytes, options, null);
            if (stage.equals("delete")) {
                maybeFail(stage, unit);
            }
            merged.add(partial);
        }
        List<byte[]> one = new ArrayList<>(1);
        one.add(merged.result());
        return one.iterator();
    }

    /**
     * Executes the plan units of one Spark partition, merges their results, and splits the merge
     * into the summary (key -1, for the driver) and one piece per shard (key = the shard, for
     * the shuffle): no partition's result travels whole to the driver.
     */
    static Iterator<Tuple2<Integer, byte[]>> executeAndSplit(
            Iterator<Unit> units, Map<String, String> explicitOptions, int shards) {
        if (!units.hasNext()) {
            return new ArrayList<Tuple2<Integer, byte[]>>(0).iterator();
        }
        byte[] merged = executePartition("plan", units, explicitOptions).next();
        OrphanUnits.Split split = OrphanUnits.split(merged, shards);
        List<Tuple2<Integer, byte[]>> out = new ArrayList<>(shards + 1);
        out.add(new Tuple2<>(SUMMARY, split.summary()));
        for (int i = 0; i < split.shards().size(); i++) {
            out.add(new Tuple2<>(i, split.shards().get(i)));
        }
        return out.iterator();
    }

    /** The key of a partition's summary among the shard pieces. */
    static final int SUMMARY = -1;

    /** One shard's decision: its report (for the driver) and its delete units. */
    static final class Decided implements Serializable {
        private static final long serialVersionUID = 1L;
        final int shard;
        final byte[] report;
        final ArrayList<byte[]> units;

        Decided(int shard, byte[] report, ArrayList<byte[]> units) {
            this.shard = shard;
            this.report = report;
            this.units = units;
        }
    }

    /**
     * Decides shard {@code shard} in a task, with every plan unit's piece of it merged: opens
     * the table with the host's options (the credentials) and returns the shard's report and
     * delete units. The cut-off, dry run and roots are the plan's (in the gate); the job has
     * no veto.
     */
    static Decided decideShard(String table, Map<String, String> explicitOptions, byte[] gate,
            int shard, byte[] piece) {
        SparkEnv env = SparkEnv.get();
        SparkConf conf = env == null ? null : env.conf();
        Executor exec = executor(conf);
        Map<String, String> options = hostOptions(conf, explicitOptions);
        try (TableContext t = new TableContext(table, options)) {
            OrphanUnits.ShardDecision d =
                    OrphanUnits.decideShard(t, exec, new OrphanConfig(), null, gate, shard, piece);
            return new Decided(shard, d.report(), new ArrayList<>(d.deleteUnits()));
        }
    }

    /** Merges two partial results (in a task or on the driver). */
    static byte[] merge(byte[] a, byte[] b) {
        SparkEnv env = SparkEnv.get();
        executor(env == null ? null : env.conf()); // loads the library
        return OrphanUnits.merge(a, b);
    }
}
