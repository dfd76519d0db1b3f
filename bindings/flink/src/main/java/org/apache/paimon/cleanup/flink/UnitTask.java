package org.apache.paimon.cleanup.flink;

import java.io.File;
import java.util.HashMap;
import java.util.Map;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.configuration.ConfigConstants;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.paimon.cleanup.BinaryMerge;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.OrphanUnits;

/**
 * One parallel task of a stage, as a bounded operator: executes each unit (numbered {@code
 * (index, bytes)}) as it arrives with one library {@link Executor} per JVM, merges the partial
 * results, and at the end of its input emits the merged result in chunks {@code (subtask, chunk,
 * chunks, bytes)} (so that no record exceeds the RPC frame of Flink's collect sink). The units
 * run in the task's own thread, so a failing unit fails the task (and Flink's restart strategy
 * applies). Nothing native is serialized: a task receives only unit bytes and the job's {@code
 * -o} options.
 */
final class UnitTask extends AbstractStreamOperator<Tuple4<Integer, Integer, Integer, byte[]>>
        implements OneInputStreamOperator<Tuple2<Integer, byte[]>, Tuple4<Integer, Integer, Integer, byte[]>>,
                BoundedOneInput {
    private static final long serialVersionUID = 1L;

    /**
     * Fault injection for the tests (scripts/test-flink.sh), read in the task: {@code
     * <stage>:<index>} makes the task holding unit {@code index} of stage {@code plan} (before
     * executing it) or {@code delete} (after executing it, so its deletions happened but its
     * result is lost) throw, in every attempt; {@code <stage>:<index>:once} only in the task's
     * first attempt (a transient failure that Flink's restart strategy gets past). On a cluster,
     * set it with {@code containerized.taskmanager.env.}; unset, nothing happens.
     */
    static final String FAIL_ENV = "PAIMON_CLEANUP_FLINK_FAIL_UNIT";

    /** Flink configuration key: worker threads of the library in each JVM (0 = one per CPU). */
    static final String THREADS_KEY = "paimon.cleanup.worker-threads";

    /** Flink's prefix for Hadoop keys in its configuration; forwarded without it. */
    static final String HADOOP_PREFIX = "flink.hadoop.";

    /** Storage keys of the Flink configuration (its file-system plugins' keys), forwarded as is. */
    static final String[] STORAGE_PREFIXES = {"s3.", "fs.s3a.", "fs.gs.", "gs.", "fs.azure."};

    /** Size of the chunks a merged result is emitted in. */
    static final int CHUNK = 1 << 20;

    private static Executor executor;
    private static Map<String, String> configOptions;

    private final String stage;
    private final HashMap<String, String> explicitOptions;
    private transient Executor exec;
    private transient Map<String, String> options;
    private transient int attempt;
    /** The partial results of the task's units, merged through a binary counter. */
    private transient BinaryMerge merged;

    /**
     * @param stage {@code plan} or {@code delete} (for the log and the fault injection)
     * @param explicitOptions the job's {@code -o} options (sent with the job: no secrets)
     */
    UnitTask(String stage, Map<String, String> explicitOptions) {
        this.stage = stage;
        this.explicitOptions = new HashMap<>(explicitOptions);
    }

    /**
     * The Flink configuration of this JVM: {@code config.yaml} of {@code FLINK_CONF_DIR} (set in
     * every Flink process; in a task manager it is the cluster's configuration), or empty.
     */
    static synchronized Configuration flinkConfiguration() {
        String dir = System.getenv(ConfigConstants.ENV_FLINK_CONF_DIR);
        if (dir != null && new File(dir, GlobalConfiguration.FLINK_CONF_FILENAME).isFile()) {
            return GlobalConfiguration.loadConfiguration(dir);
        }
        return new Configuration();
    }

    /** The storage options of this JVM's Flink configuration (loaded once). */
    static synchronized Map<String, String> configOptions() {
        if (configOptions == null) {
            Map<String, String> out = new HashMap<>();
            for (Map.Entry<String, String> kv : flinkConfiguration().toMap().entrySet()) {
                String k = kv.getKey();
                if (k.startsWith(HADOOP_PREFIX)) {
                    out.put(k.substring(HADOOP_PREFIX.length()), kv.getValue());
                    continue;
                }
                for (String p : STORAGE_PREFIXES) {
                    if (k.startsWith(p)) {
                        out.putIfAbsent(k, kv.getValue());
                    }
                }
            }
            configOptions = out;
        }
        return configOptions;
    }

    /**
     * The options every JVM adds to a unit's own: the storage keys of its Flink configuration,
     * then {@code explicit} (the job's {@code -o}), which win.
     */
    static Map<String, String> hostOptions(Map<String, String> explicit) {
        Map<String, String> out = new HashMap<>(configOptions());
        out.putAll(explicit);
        return out;
    }

    /** The library executor of this JVM (created on first use, closed at JVM exit). */
    static synchronized Executor executor() {
        if (executor == null) {
            String threads = flinkConfiguration().toMap().get(THREADS_KEY);
            final Executor e = new Executor(threads == null ? 0 : JobArgs.positiveOrZero(THREADS_KEY, threads));
            Runtime.getRuntime().addShutdownHook(new Thread(e::close, "paimon-cleanup-executor-close"));
            executor = e;
        }
        return executor;
    }

    private void maybeFail(int index, int attempt) {
        String spec = System.getenv(FAIL_ENV);
        if (spec == null) {
            return;
        }
        String target = stage + ":" + index;
        if (spec.equals(target) || (spec.equals(target + ":once") && attempt == 0)) {
            String message = "injected failure (" + FAIL_ENV + "=" + spec + ") in " + stage
                    + " unit " + index + ", attempt " + attempt;
            // On the task manager's stderr: Flink logs a task failure it recovers from only at
            // INFO level.
            System.err.println("remove-orphan-files: " + message);
            throw new IllegalStateException(message);
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        NativeLibrary.prepare(getRuntimeContext().getDistributedCache());
        exec = executor();
        options = hostOptions(explicitOptions);
        attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        merged = new BinaryMerge(OrphanUnits::merge);
    }

    /**
     * Executes one unit and merges its result in, keeping at most one partial result per power
     * of two of units (a binary counter), so merging costs O(n log n) bytes.
     */
    @Override
    public void processElement(StreamRecord<Tuple2<Integer, byte[]>> record) {
        Tuple2<Integer, byte[]> unit = record.getValue();
        int index = unit.f0.intValue();
        if (stage.equals("plan")) {
            maybeFail(index, attempt);
        }
        byte[] partial = OrphanUnits.execute(exec, unit.f1, options, null);
        if (stage.equals("delete")) {
            maybeFail(index, attempt);
        }
        merged.add(partial);
    }

    /** Merges what the counter holds and emits it in chunks. */
    @Override
    public void endInput() {
        if (merged.isEmpty()) {
            return;
        }
        byte[] result = merged.result();
        merged.clear();
        emitChunks(output, getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), result);
    }

    /**
     * Emits a task's merged result as records {@code (subtask, chunk, chunks, bytes)} of at most
     * {@link #CHUNK} bytes each (at least one record, also for an empty result).
     */
    static void emitChunks(Output<StreamRecord<Tuple4<Integer, Integer, Integer, byte[]>>> output,
            int subtask, byte[] merged) {
        int chunks = Math.max(1, (merged.length + CHUNK - 1) / CHUNK);
        for (int c = 0; c < chunks; c++) {
            int from = c * CHUNK;
            int to = Math.min(merged.length, from + CHUNK);
            byte[] part = new byte[to - from];
            System.arraycopy(merged, from, part, 0, part.length);
            output.collect(new StreamRecord<>(Tuple4.of(subtask, c, chunks, part)));
        }
    }
}
