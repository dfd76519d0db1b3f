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
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.paimon.cleanup.BinaryMerge;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.ExpiryUnits;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import scala.Tuple2;

/**
 * What runs inside the Spark tasks of {@link ExpireSnapshots}: executes snapshot-expiry units with
 * the JVM's library {@link Executor} ({@link UnitRunner#executor}) and merges their partial
 * results. Nothing native is serialized; a task receives only unit bytes and the host options.
 */
final class ExpiryUnitRunner {
    /**
     * Fault injection for the tests (scripts/test-spark.sh), read in the task: {@code
     * <stage>:<index>} makes the task of unit {@code index} of stage {@code candidates} or {@code
     * protect} (before executing it; with {@code --shards} the candidate units are numbered as
     * without) or {@code delete} (after executing it, so its deletions
     * happened but its result is lost) throw, in every attempt; {@code <stage>:<index>:once} only
     * in the task's first attempt. Unset, nothing happens.
     */
    static final String FAIL_ENV = "PAIMON_CLEANUP_SPARK_FAIL_EXPIRY_UNIT";

    private ExpiryUnitRunner() {}

    private static void maybeFail(String stage, UnitRunner.Unit unit) {
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
     * Writes {@code paths} (one a line) to {@code <dir>/<name>.txt} through a temporary file
     * renamed into place; a task's later attempt writes {@code <name>.attempt-<n>.txt}, so that
     * the paths an earlier attempt freed before it failed stay listed.
     */
    static void writePaths(String dir, String name, List<String> paths) {
        TaskContext tc = TaskContext.get();
        int attempt = tc == null ? 0 : tc.attemptNumber();
        String file = attempt == 0 ? name + ".txt" : name + ".attempt-" + attempt + ".txt";
        try {
            Path d = Paths.get(dir);
            Files.createDirectories(d);
            Path tmp = d.resolve("." + file + ".tmp");
            try (BufferedWriter w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                for (String p : paths) {
                    w.write(p);
                    w.write('\n');
                }
            }
            Files.move(tmp, d.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + " under " + dir, e);
        }
    }

    /** Executes the units of one partition and merges their results (a binary counter). */
    static Iterator<byte[]> executePartition(
            String stage, Iterator<UnitRunner.Unit> units, Map<String, String> explicitOptions) {
        return executePartition(stage, units, explicitOptions, null);
    }

    /**
     * {@link #executePartition(String, Iterator, Map)}; with {@code pathsDir} (delete units of a
     * gate with paths to the tasks) each unit's deleted paths go to {@code
     * <pathsDir>/unit-<index>.txt}, written by this task, and only its counts are merged.
     */
    static Iterator<byte[]> executePartition(String stage, Iterator<UnitRunner.Unit> units,
            Map<String, String> explicitOptions, String pathsDir) {
        SparkEnv env = SparkEnv.get();
        SparkConf conf = env == null ? null : env.conf();
        Executor exec = UnitRunner.executor(conf);
        Map<String, String> options = UnitRunner.hostOptions(conf, explicitOptions);
        BinaryMerge merged = new BinaryMerge(ExpiryUnits::merge);
        while (units.hasNext()) {
            TaskContext tc = TaskContext.get();
            if (tc != null && tc.isInterrupted()) {
                throw new IllegalStateException("task killed");
            }
            UnitRunner.Unit unit = units.next();
            if (!stage.equals("delete")) {
                maybeFail(stage, unit);
            }
            byte[] partial;
            if (pathsDir == null) {
                partial = ExpiryUnits.execute(exec, unit.bytes, options, null);
            } else {
                ExpiryUnits.Executed e = ExpiryUnits.executeHandingPaths(exec, unit.bytes, options, null);
                writePaths(pathsDir, "unit-" + unit.index, e.paths());
                partial = e.result();
            }
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
     * Executes the candidate units of one Spark partition, merges their results and splits the
     * merge into the summary (key {@link UnitRunner#SUMMARY}, for the driver's gate) and one
     * piece per shard (key = the shard, for the shuffle): no partition's candidates travel to
     * the driver.
     */
    static Iterator<Tuple2<Integer, byte[]>> executeAndSplit(
            Iterator<UnitRunner.Unit> units, Map<String, String> explicitOptions, int shards) {
        if (!units.hasNext()) {
            return new ArrayList<Tuple2<Integer, byte[]>>(0).iterator();
        }
        byte[] merged = executePartition("candidates", units, explicitOptions).next();
        ExpiryUnits.Split split = ExpiryUnits.split(merged, shards);
        List<Tuple2<Integer, byte[]>> out = new ArrayList<>(shards + 1);
        out.add(new Tuple2<>(UnitRunner.SUMMARY, split.summary()));
        for (int i = 0; i < split.shards().size(); i++) {
            out.add(new Tuple2<>(i, split.shards().get(i)));
        }
        return out.iterator();
    }

    /**
     * Decides shard {@code shard} in a task, with every candidate unit's piece of it merged: the
     * library opens the table from the gate with the host's options (the credentials) and
     * returns the shard's report and delete units. Nothing is deleted here.
     */
    static UnitRunner.Decided decideShard(
            Map<String, String> explicitOptions, byte[] gate, int shard, byte[] piece) {
        return decideShard(explicitOptions, gate, shard, piece, null);
    }

    /**
     * {@link #decideShard(Map, byte[], int, byte[])}; with {@code pathsDir} (a gate with paths
     * to the tasks) a dry run's shard writes the paths it would delete to {@code
     * <pathsDir>/shard-<shard>.txt} itself.
     */
    static UnitRunner.Decided decideShard(
            Map<String, String> explicitOptions, byte[] gate, int shard, byte[] piece, String pathsDir) {
        SparkEnv env = SparkEnv.get();
        SparkConf conf = env == null ? null : env.conf();
        Executor exec = UnitRunner.executor(conf);
        Map<String, String> options = UnitRunner.hostOptions(conf, explicitOptions);
        ExpiryUnits.ShardDecision d = ExpiryUnits.decideShard(exec, gate, shard, piece, options, null);
        if (pathsDir != null && !d.paths().isEmpty()) {
            writePaths(pathsDir, "shard-" + shard, d.paths());
        }
        return new UnitRunner.Decided(shard, d.report(), new ArrayList<>(d.deleteUnits()));
    }

    /** Merges two partial results (in a task or on the driver). */
    static byte[] merge(byte[] a, byte[] b) {
        SparkEnv env = SparkEnv.get();
        UnitRunner.executor(env == null ? null : env.conf()); // loads the library
        return ExpiryUnits.merge(a, b);
    }
}
