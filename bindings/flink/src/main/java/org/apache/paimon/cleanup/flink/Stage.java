package org.apache.paimon.cleanup.flink;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.paimon.cleanup.OrphanUnits;

/**
 * One stage of a run as one Flink batch job: the units (from a collection source) are spread over
 * {@code parallelism} tasks by their index (unit {@code i} to task {@code i mod n}), each task
 * executes and merges its units ({@link UnitTask}), and the tasks' results come back to {@code
 * main} through Flink's collect sink, where they are merged (merging is associative and
 * commutative, so the grouping does not matter).
 */
final class Stage {
    private Stage() {}

    private static final TypeInformation<Tuple2<Integer, byte[]>> UNIT =
            Types.TUPLE(Types.INT, Types.PRIMITIVE_ARRAY(Types.BYTE));
    private static final TypeInformation<Tuple4<Integer, Integer, Integer, byte[]>> CHUNK =
            Types.TUPLE(Types.INT, Types.INT, Types.INT, Types.PRIMITIVE_ARRAY(Types.BYTE));

    /**
     * Runs {@code units} in parallel tasks and returns their merged partial result (an empty
     * array, the neutral element, when there are none).
     *
     * @param env the environment (batch mode)
     * @param stage {@code plan} or {@code delete}
     * @param units the units
     * @param wanted the parallelism asked for (0: the environment's)
     * @param options the job's {@code -o} options
     * @throws Exception when the Flink job fails (a task failed more often than the restart
     *     strategy allows)
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
                .transform("execute " + stage + " units", CHUNK, new UnitTask(stage, options))
                .setParallelism(parallelism);
        // Each task's chunks, by task index; only a finished attempt's output reaches the sink.
        Map<Integer, TreeMap<Integer, byte[]>> byTask = new TreeMap<>();
        Map<Integer, Integer> expected = new TreeMap<>();
        try (CloseableIterator<Tuple4<Integer, Integer, Integer, byte[]>> it =
                results.executeAndCollect("paimon-cleanup remove-orphan-files: " + stage + " units")) {
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
            merged = OrphanUnits.merge(merged, whole.toByteArray());
        }
        return merged;
    }
}
