package org.apache.paimon.cleanup.flink;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.CloseableIterator;
import org.apache.paimon.cleanup.BinaryMerge;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.ExpiryUnits;

/**
 * One stage of {@link ExpireSnapshots} as one Flink batch job, as {@link Stage} runs the orphan
 * units: the units are spread over {@code parallelism} tasks by index, each task executes and
 * merges its units ({@link Task}), and the tasks' results come back to {@code main} in chunks,
 * where they are merged.
 */
final class ExpiryStage {
    private ExpiryStage() {}

    /**
     * Fault injection for the tests (scripts/test-flink.sh), read in the task: {@code
     * <stage>:<index>} makes the task holding unit {@code index} of stage {@code candidates} or
     * {@code protect} (before executing it) or {@code delete} (after executing it, so its deletions
     * happened but its result is lost) throw, in every attempt; {@code <stage>:<index>:once} only
     * in the task's first attempt. Unset, nothing happens.
     */
    static final String FAIL_ENV = "PAIMON_CLEANUP_FLINK_FAIL_EXPIRY_UNIT";

    private static final TypeInformation<Tuple2<Integer, byte[]>> UNIT =
            Types.TUPLE(Types.INT, Types.PRIMITIVE_ARRAY(Types.BYTE));
    private static final TypeInformation<Tuple4<Integer, Integer, Integer, byte[]>> CHUNK =
            Types.TUPLE(Types.INT, Types.INT, Types.INT, Types.PRIMITIVE_ARRAY(Types.BYTE));

    /**
     * Runs {@code units} in parallel tasks and returns their merged partial result (an empty array
     * when there are none).
     *
     * @throws Exception when the Flink job fails
     */
    static byte[] run(StreamExecutionEnvironment env, String stage, List<byte[]> units, int wanted,
            Map<String, String> options) throws Exception {
        if (units.isEmpty()) {
            return new byte[0];
        }
        int parallelism = Math.max(1, Math.min(units.size(), wanted > 0 ? wanted : env.getParallelism()));
        List<Tuple2<Integer, byte[]>> numbered = new ArrayList<>(units.size());
        for (int i = 0; i < units.size(); i++) {
            numbered.add(Tuple2.of(i, units.get(i)));
        }
        DataStream<Tuple4<Integer, Integer, Integer, byte[]>> results = env
                .fromData(numbered, UNIT)
                .name(stage + " units (" + units.size() + ")")
                .partitionCustom((Integer index, int n) -> index % n, u -> u.f0)
                .transform("execute " + stage + " units", CHUNK, new Task(stage, options))
                .setParallelism(parallelism);
        Map<Integer, TreeMap<Integer, byte[]>> byTask = new TreeMap<>();
        Map<Integer, Integer> expected = new TreeMap<>();
        try (CloseableIterator<Tuple4<Integer, Integer, Integer, byte[]>> it =
                results.executeAndCollect("paimon-cleanup expire-snapshots: " + stage + " units")) {
            while (it.hasNext()) {
                Tuple4<Integer, Integer, Integer, byte[]> c = it.next();
                byTask.computeIfAbsent(c.f0, k -> new TreeMap<>()).put(c.f1, c.f3);
                expected.put(c.f0, c.f2);
            }
        }
        byte[] merged = new byte[0];
        for (Map.Entry<Integer, TreeMap<Integer, byte[]>> task : byTask.entrySet()) {
            TreeMap<Integer, byte[]> chunks = task.getValue();
            int want = expected.get(task.getKey()).intValue();
            if (chunks.size() != want || chunks.lastKey().intValue() != want - 1) {
                throw new IllegalStateException("task " + task.getKey() + " of stage " + stage
                        + " returned " + chunks.size() + " of " + want + " chunks");
            }
            ByteArrayOutputStream whole = new ByteArrayOutputStream();
            for (byte[] part : chunks.values()) {
                whole.write(part, 0, part.length);
            }
            merged = ExpiryUnits.merge(merged, whole.toByteArray());
        }
        return merged;
    }

    /** One parallel task: executes its units, merges the results, emits them in chunks. */
    static final class Task extends AbstractStreamOperator<Tuple4<Integer, Integer, Integer, byte[]>>
            implements OneInputStreamOperator<Tuple2<Integer, byte[]>, Tuple4<Integer, Integer, Integer, byte[]>>,
                    BoundedOneInput {
        private static final long serialVersionUID = 1L;

        private final String stage;
        private final HashMap<String, String> explicitOptions;
        private transient Executor exec;
        private transient Map<String, String> options;
        private transient int attempt;
        /** The partial results of the task's units, merged through a binary counter. */
        private transient BinaryMerge merged;

        Task(String stage, Map<String, String> explicitOptions) {
            this.stage = stage;
            this.explicitOptions = new HashMap<>(explicitOptions);
        }

        private void maybeFail(int index) {
            String spec = System.getenv(FAIL_ENV);
            if (spec == null) {
                return;
            }
            String target = stage + ":" + index;
            if (spec.equals(target) || (spec.equals(target + ":once") && attempt == 0)) {
                String message = "injected failure (" + FAIL_ENV + "=" + spec + ") in " + stage
                        + " unit " + index + ", attempt " + attempt;
                System.err.println("expire-snapshots: " + message);
                throw new IllegalStateException(message);
            }
        }

        @Override
        public void open() throws Exception {
            super.open();
            NativeLibrary.prepare(getRuntimeContext().getDistributedCache());
            exec = UnitTask.executor();
            options = UnitTask.hostOptions(explicitOptions);
            attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
            merged = new BinaryMerge(ExpiryUnits::merge);
        }

        @Override
        public void processElement(StreamRecord<Tuple2<Integer, byte[]>> record) {
            Tuple2<Integer, byte[]> unit = record.getValue();
            int index = unit.f0.intValue();
            if (!stage.equals("delete")) {
                maybeFail(index);
            }
            byte[] partial = ExpiryUnits.execute(exec, unit.f1, options, null);
            if (stage.equals("delete")) {
                maybeFail(index);
            }
            merged.add(partial);
        }

        @Override
        public void endInput() {
            if (merged.isEmpty()) {
                return;
            }
            byte[] result = merged.result();
            merged.clear();
            UnitTask.emitChunks(output, getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), result);
        }
    }
}
