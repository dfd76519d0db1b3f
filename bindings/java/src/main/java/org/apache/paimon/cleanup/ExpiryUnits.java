package org.apache.paimon.cleanup;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Snapshot expiry split into units that an engine (Spark, Flink, ...) schedules on its own
 * workers. Every unit and every partial result is an opaque, versioned byte string: ship it,
 * store it, retry it. The result equals {@link TableContext#expireSnapshots} (same report, same
 * files left): the driver steps build the single-process run's deletion plan with the same code.
 *
 * <h2>Contract</h2>
 *
 * <pre>{@code
 * // driver
 * ExpiryUnits.Step plan = ExpiryUnits.plan(table, exec, config, run);
 * // executors, any order (candidate units only read):
 * byte[] candidates = merge of ExpiryUnits.execute(exec, unit, hostOptions, run) over plan.units()
 * // driver
 * ExpiryUnits.Step protect = ExpiryUnits.protect(table, exec, run, plan.state(), candidates);
 * // executors (protect units only read):
 * byte[] protectedKeys = merge of execute(...) over protect.units()
 * // driver
 * ExpiryUnits.Step decision = ExpiryUnits.decide(table, exec, run, protect.state(), candidates, protectedKeys);
 * // executors: each delete unit (a retry is harmless: deleting a deleted file is a no-op)
 * byte[] deletes = merge of execute(...) over decision.units()
 * // driver
 * Report report = ExpiryUnits.finish(table, exec, run, decision.state(), deletes);
 * }</pre>
 *
 * <ol>
 *   <li>{@link #plan}: resolves the retention and picks the snapshots to expire (reads only);
 *       candidate units read a slice of the expired range's delta (or changelog) manifest lists
 *       and return the files they free.
 *   <li>{@link #protect}: rebuilds the candidates in plan order, reads every version that
 *       protects files (retained snapshots, tags of every branch, other branches, long-lived
 *       changelogs); protect units read a slice of those versions' manifests and return which
 *       candidates they still need. Metadata a protector needs that cannot be read fails the
 *       unit (the job), with nothing deleted.
 *   <li>{@link #decide}: builds the deletion plan, checks every path (roots, kinds, no symlinked
 *       directory) and returns delete units of data and changelog files (none in a dry run).
 *   <li>{@link #finish}, after every delete unit succeeded: deletes the manifests, index files,
 *       statistics and lists, then the snapshot files, then writes the {@code EARLIEST} hint
 *       (the single-process run's crash-safe order). A delete unit that failed, or whose result
 *       is missing, makes it fail before anything of that: the metadata naming the files still
 *       there stays, and a rerun converges.
 * </ol>
 *
 * <h2>The sharded decision</h2>
 *
 * <p>Instead of {@link #protect} and {@link #decide}, which hold every candidate on the driver,
 * the decision can be split by shard so that no process holds every candidate:
 *
 * <pre>{@code
 * // executors: each candidate unit's result (or a partition's merge) split into K pieces
 * Split s = ExpiryUnits.split(candidateResult, k);   // s.summary() -> driver, s.shards().get(i) -> shard i
 * // driver
 * Gated g = ExpiryUnits.gate(table, exec, run, plan.state(), mergedSummaries, k);
 * // executors, one task per shard (its pieces merged with merge):
 * ShardDecision d = ExpiryUnits.decideShard(exec, g.gate(), shard, piece, hostOptions, run);
 * // executors: execute every shard's d.deleteUnits(); driver:
 * byte[] decision = ExpiryUnits.conclude(g.decision(), every shard's d.report());
 * Report report = ExpiryUnits.finish(table, exec, run, decision, mergedDeletes);
 * }</pre>
 *
 * <p>A missing, doubled or foreign partial result is refused with INVALID_ARGUMENT. All methods
 * are static and thread-safe; they block the calling thread. Failures throw {@link
 * PaimonCleanupException} with the library's status.
 */
public final class ExpiryUnits {
    private ExpiryUnits() {}

    /** What a driver step returns: its state (or decision) and the units to execute next. */
    public static final class Step {
        private final byte[] state;
        private final List<byte[]> units;

        Step(byte[] state, List<byte[]> units) {
            this.state = state;
            this.units = units;
        }

        /** @return the state for the next driver step (keep it on the driver) */
        public byte[] state() {
            return state;
        }

        /** @return the units to execute with {@link #execute} (possibly none) */
        public List<byte[]> units() {
            return units;
        }
    }

    private static Step step(byte[][] all) {
        List<byte[]> out = new ArrayList<>(Math.max(0, all.length - 1));
        for (int i = 1; i < all.length; i++) {
            out.add(all[i]);
        }
        return new Step(all[0], Collections.unmodifiableList(out));
    }

    private interface TokenCall<T> {
        T call(long token, ProgressListener progress);
    }

    private static <T> T withToken(RunOptions run, TokenCall<T> body) {
        CancelToken cancel = run == null ? null : run.cancelToken();
        ProgressListener progress = run == null ? null : run.progress();
        long token = PaimonCleanup.runNew(run == null ? 0 : run.maxMemory(),
                run == null ? null : run.log(), run == null ? 0 : run.logLevel());
        try {
            if (cancel != null) {
                cancel.attach(token);
            }
            return body.call(token, progress);
        } finally {
            if (cancel != null) {
                cancel.detach(token);
            }
            PaimonCleanup.runFree(token);
        }
    }

    private interface DriverCall<T> {
        T call(long ctx, long exec, long token, ProgressListener progress);
    }

    private static <T> T onDriver(TableContext table, Executor exec, RunOptions run, final DriverCall<T> body) {
        final long ctx = table.acquireHandle();
        try {
            final long e = exec.acquire();
            try {
                return withToken(run, new TokenCall<T>() {
                    @Override
                    public T call(long token, ProgressListener p) {
                        return body.call(ctx, e, token, p);
                    }
                });
            } finally {
                exec.release();
            }
        } finally {
            table.releaseHandle();
        }
    }

    /** { keys, values } of the host options, UTF-8 encoded (empty for null). */
    private static byte[][][] encodeOptions(Map<String, String> hostOptions) {
        int n = hostOptions == null ? 0 : hostOptions.size();
        byte[][] keys = new byte[n][];
        byte[][] values = new byte[n][];
        if (hostOptions != null) {
            int i = 0;
            for (Map.Entry<String, String> en : hostOptions.entrySet()) {
                keys[i] = PaimonCleanup.encode(en.getKey(), "option key");
                values[i] = PaimonCleanup.encode(en.getValue(), "value of option " + en.getKey());
                i++;
            }
        }
        return new byte[][][] {keys, values};
    }

    private static void nonNull(Object... values) {
        for (Object v : values) {
            if (v == null) {
                throw new PaimonCleanupException(PaimonCleanupException.NULL_POINTER, "an argument is null");
            }
        }
    }

    /**
     * Plans an expiry of the table's branch (on the driver).
     *
     * @param table the table (its branch expires)
     * @param exec the executor
     * @param config the settings (null = the table's options, then Paimon's defaults)
     * @param run may be null
     * @return the plan state and the candidate units
     * @throws PaimonCleanupException INVALID_ARGUMENT, NOT_FOUND, CONFLICT, MALFORMED, STORAGE,
     *     CANCELLED (as {@link TableContext#expireSnapshots} before its first deletion)
     */
    public static Step plan(TableContext table, Executor exec, ExpireConfig config, RunOptions run) {
        final long cfg = TableContext.expireConfig(config == null ? new ExpireConfig() : config);
        try {
            return step(onDriver(table, exec, run, new DriverCall<byte[][]>() {
                @Override
                public byte[][] call(long ctx, long e, long token, ProgressListener p) {
                    return PaimonCleanup.expiryUnitsPlan(ctx, e, cfg, token, p);
                }
            }));
        } finally {
            PaimonCleanup.expireConfigFree(cfg);
        }
    }

    /**
     * Executes one unit (candidate, protect or delete) anywhere.
     *
     * @param exec the executor of this JVM
     * @param unit a unit of {@link Step#units()}
     * @param hostOptions options added to (and overriding) those carried in the unit, e.g. the
     *     storage credentials, which units never carry (may be null)
     * @param run may be null
     * @return the partial result, to {@link #merge}
     * @throws PaimonCleanupException INVALID_ARGUMENT for bytes that are not a unit of this
     *     format version, NOT_FOUND / MALFORMED / STORAGE (a protect unit that cannot read what a
     *     protector needs), PATH_REFUSED, CANCELLED
     */
    public static byte[] execute(Executor exec, final byte[] unit, Map<String, String> hostOptions, RunOptions run) {
        nonNull(unit);
        byte[][][] kv = encodeOptions(hostOptions);
        final byte[][] keys = kv[0];
        final byte[][] values = kv[1];
        final long e = exec.acquire();
        try {
            return withToken(run, new TokenCall<byte[]>() {
                @Override
                public byte[] call(long token, ProgressListener p) {
                    return PaimonCleanup.expiryUnitExecute(e, unit, keys, values, token, p);
                }
            });
        } finally {
            exec.release();
        }
    }

    /** What {@link #executeHandingPaths} returns. */
    public static final class Executed {
        private final byte[] result;
        private final List<String> paths;

        Executed(byte[] result, List<String> paths) {
            this.result = result;
            this.paths = paths;
        }

        /** @return the unit's partial result, to {@link #merge} */
        public byte[] result() {
            return result;
        }

        /**
         * @return every path a delete unit of a gate with {@code pathsToTasks} deleted, as the
         *     report shows paths, in the order deleted; empty for every other unit
         */
        public List<String> paths() {
            return paths;
        }
    }

    /** The paths of a NUL-separated UTF-8 listing (each path followed by a NUL byte). */
    static List<String> pathsOf(byte[] joined) {
        List<String> out = new ArrayList<String>();
        int from = 0;
        for (int i = 0; i < joined.length; i++) {
            if (joined[i] == 0) {
                out.add(new String(joined, from, i - from, StandardCharsets.UTF_8));
                from = i + 1;
            }
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * {@link #execute} for any unit, including the delete units of a gate with {@code
     * pathsToTasks} ({@link #gate(TableContext, Executor, RunOptions, byte[], byte[], int,
     * boolean)}), which {@link #execute} refuses: their result carries the files and bytes
     * deleted per class, every failure and the first 20 paths, and {@link Executed#paths()}
     * every path the unit deleted, for this task to keep where it wants.
     *
     * @param exec the executor of this JVM
     * @param unit a unit
     * @param hostOptions options added to (and overriding) those carried in the unit (may be
     *     null)
     * @param run may be null
     * @return the partial result and the paths
     * @throws PaimonCleanupException as {@link #execute}
     */
    public static Executed executeHandingPaths(Executor exec, final byte[] unit,
            Map<String, String> hostOptions, RunOptions run) {
        nonNull(unit);
        byte[][][] kv = encodeOptions(hostOptions);
        final byte[][] keys = kv[0];
        final byte[][] values = kv[1];
        final long e = exec.acquire();
        try {
            byte[][] both = withToken(run, new TokenCall<byte[][]>() {
                @Override
                public byte[][] call(long token, ProgressListener p) {
                    return PaimonCleanup.expiryUnitExecutePaths(e, unit, keys, values, token, p);
                }
            });
            return new Executed(both[0], pathsOf(both[1]));
        } finally {
            exec.release();
        }
    }

    /**
     * Combines two partial results of one stage (associative and commutative; an empty array is
     * neutral).
     *
     * @param a a partial result, or an empty array
     * @param b a partial result, or an empty array
     * @return the combined partial result
     * @throws PaimonCleanupException INVALID_ARGUMENT for foreign bytes, results of different
     *     plans or stages, or a unit's result in both
     */
    public static byte[] merge(byte[] a, byte[] b) {
        nonNull(a, b);
        return PaimonCleanup.expiryPartialsMerge(a, b);
    }

    /**
     * After the candidate units (on the driver): reads the protectors, returns the protect units.
     *
     * @param table the table the plan was made for
     * @param exec the executor
     * @param run may be null
     * @param state {@link Step#state()} of {@link #plan}
     * @param candidates every candidate unit's result, merged
     * @return the new state (for {@link #decide}) and the protect units
     * @throws PaimonCleanupException INVALID_ARGUMENT for foreign bytes or a missing result,
     *     NOT_FOUND / MALFORMED / STORAGE reading what protects files, CANCELLED
     */
    public static Step protect(TableContext table, Executor exec, RunOptions run, final byte[] state,
            final byte[] candidates) {
        nonNull(state, candidates);
        return step(onDriver(table, exec, run, new DriverCall<byte[][]>() {
            @Override
            public byte[][] call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.expiryUnitsProtect(ctx, e, state, candidates, token, p);
            }
        }));
    }

    /**
     * After the protect units (on the driver): builds and checks the deletion plan, returns the
     * delete units. Nothing is deleted.
     *
     * @param table the table the plan was made for
     * @param exec the executor
     * @param run may be null
     * @param state {@link Step#state()} of {@link #protect}
     * @param candidates the candidate results given to {@link #protect}
     * @param protectedKeys every protect unit's result, merged (empty when there was none)
     * @return the decision (for {@link #finish}) and the delete units (none in a dry run)
     * @throws PaimonCleanupException INVALID_ARGUMENT, CONFLICT, PATH_REFUSED, NOT_FOUND,
     *     MALFORMED, STORAGE, CANCELLED
     */
    public static Step decide(TableContext table, Executor exec, RunOptions run, final byte[] state,
            final byte[] candidates, final byte[] protectedKeys) {
        nonNull(state, candidates, protectedKeys);
        return step(onDriver(table, exec, run, new DriverCall<byte[][]>() {
            @Override
            public byte[][] call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.expiryUnitsDecide(ctx, e, state, candidates, protectedKeys, token, p);
            }
        }));
    }

    /** What {@link #split} returns. */
    public static final class Split {
        private final byte[] summary;
        private final List<byte[]> shards;

        Split(byte[] summary, List<byte[]> shards) {
            this.summary = summary;
            this.shards = shards;
        }

        /** @return the summary (what the driver's gate needs, not the candidates) */
        public byte[] summary() {
            return summary;
        }

        /** @return one piece per shard: element {@code i} is shard {@code i} */
        public List<byte[]> shards() {
            return shards;
        }
    }

    /** What {@link #gate} returns. */
    public static final class Gated {
        private final byte[] decision;
        private final byte[] gate;

        Gated(byte[] decision, byte[] gate) {
            this.decision = decision;
            this.gate = gate;
        }

        /** @return the decision so far, kept on the driver for {@link #conclude} */
        public byte[] decision() {
            return decision;
        }

        /** @return the gate every shard decides with (ship it to the shard tasks) */
        public byte[] gate() {
            return gate;
        }
    }

    /** What {@link #decideShard} returns. */
    public static final class ShardDecision {
        private final byte[] report;
        private final List<byte[]> deleteUnits;
        private final List<String> paths;

        ShardDecision(byte[] report, List<byte[]> deleteUnits, List<String> paths) {
            this.report = report;
            this.deleteUnits = deleteUnits;
            this.paths = paths;
        }

        /**
         * @return with a gate of {@code pathsToTasks}, in a dry run: every path the shard would
         *     delete, in the single-process order, for this task to keep; otherwise empty
         */
        public List<String> paths() {
            return paths;
        }

        /** @return the shard's report, for {@link #conclude} */
        public byte[] report() {
            return report;
        }

        /** @return the shard's delete units, to {@link #execute} (none in a dry run) */
        public List<byte[]> deleteUnits() {
            return deleteUnits;
        }
    }

    /**
     * Splits a candidate unit's result (or several merged) into its summary and one piece per
     * shard, by the directory of each candidate: shuffle the pieces by shard (merge a shard's
     * pieces with {@link #merge}) and merge the summaries for {@link #gate}.
     *
     * @param partial a whole result of candidate units
     * @param shards the shard count, 1 to 65,536
     * @return the summary and the pieces
     * @throws PaimonCleanupException INVALID_ARGUMENT for a shard count out of range or bytes
     *     that are not a whole result of candidate units
     */
    public static Split split(byte[] partial, int shards) {
        nonNull(partial);
        byte[][] all = PaimonCleanup.expiryPartialSplit(partial, shards);
        Step s = step(all);
        return new Split(s.state(), s.units());
    }

    /**
     * The gate of the sharded decision (on the driver), instead of {@link #protect} and {@link
     * #decide}: reads the removed snapshots' metadata and every version that protects files,
     * decides and checks the metadata files the expiry deletes, and returns the decision so far
     * and the gate the shards decide with. Nothing is deleted.
     *
     * @param table the table the plan was made for
     * @param exec the executor
     * @param run may be null
     * @param state {@link Step#state()} of {@link #plan}
     * @param summary every candidate unit's summary, merged
     * @param shards the shard count the results were split into
     * @return the decision so far and the gate
     * @throws PaimonCleanupException INVALID_ARGUMENT for foreign bytes, a missing or doubled
     *     summary or another shard count; NOT_FOUND / MALFORMED / STORAGE when metadata cannot be
     *     read (nothing deleted); PATH_REFUSED; CANCELLED
     */
    public static Gated gate(TableContext table, Executor exec, RunOptions run, final byte[] state,
            final byte[] summary, final int shards) {
        return gate(table, exec, run, state, summary, shards, false);
    }

    /**
     * {@link #gate(TableContext, Executor, RunOptions, byte[], byte[], int)}, choosing where the
     * freed data and changelog paths go. With {@code pathsToTasks} each path goes to the task
     * that freed it ({@link ShardDecision#paths()} in a dry run, {@link Executed#paths()} of the
     * delete units, which must run through {@link #executeHandingPaths}), and the shard reports
     * and delete results carry counts per class, every failure and the first 20 paths, so the
     * driver holds what is proportional to shards and units, not to files. The report of
     * {@link #finish} then has the single-process counts and failures, lists those 20 paths and
     * the metadata files the driver deleted, and its JSON says {@code "paths_elsewhere": true}.
     *
     * @param pathsToTasks true: the paths go to the tasks; false: the same as the overload
     *     without it
     * @return the decision so far and the gate
     * @throws PaimonCleanupException as the overload without {@code pathsToTasks}
     */
    public static Gated gate(TableContext table, Executor exec, RunOptions run, final byte[] state,
            final byte[] summary, final int shards, final boolean pathsToTasks) {
        nonNull(state, summary);
        byte[][] all = onDriver(table, exec, run, new DriverCall<byte[][]>() {
            @Override
            public byte[][] call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.expiryUnitsGate(ctx, e, state, summary, shards, pathsToTasks, token, p);
            }
        });
        return new Gated(all[0], all[1]);
    }

    /**
     * Decides one shard anywhere: opens the table from the gate with the host's options, decides
     * the shard's data and changelog files as the single-process run does, checks every path and
     * returns the shard's report and delete units. Nothing is deleted.
     *
     * @param exec the executor of this JVM
     * @param gate {@link Gated#gate()}
     * @param shard the shard
     * @param piece every candidate unit's piece of this shard, merged
     * @param hostOptions options added to (and overriding) those in the gate, e.g. the storage
     *     credentials (may be null)
     * @param run may be null
     * @return the report and the delete units
     * @throws PaimonCleanupException INVALID_ARGUMENT for foreign bytes, another shard's piece or
     *     a piece missing a unit; NOT_FOUND / MALFORMED / STORAGE when metadata a protector needs
     *     cannot be read; PATH_REFUSED; CANCELLED
     */
    public static ShardDecision decideShard(Executor exec, final byte[] gate, final int shard,
            final byte[] piece, Map<String, String> hostOptions, RunOptions run) {
        nonNull(gate, piece);
        byte[][][] kv = encodeOptions(hostOptions);
        final byte[][] keys = kv[0];
        final byte[][] values = kv[1];
        final long e = exec.acquire();
        try {
            byte[][] all = withToken(run, new TokenCall<byte[][]>() {
                @Override
                public byte[][] call(long token, ProgressListener p) {
                    return PaimonCleanup.expiryShardDecide(e, gate, shard, piece, keys, values, token, p);
                }
            });
            List<byte[]> units = new ArrayList<byte[]>(all.length - 2);
            for (int i = 2; i < all.length; i++) {
                units.add(all[i]);
            }
            return new ShardDecision(all[0], Collections.unmodifiableList(units), pathsOf(all[1]));
        } finally {
            exec.release();
        }
    }

    /**
     * Concludes the sharded decision (on the driver) with every shard's report, each exactly
     * once.
     *
     * @param decision {@link Gated#decision()}
     * @param reports every shard's report
     * @return the decision, for {@link #finish}
     * @throws PaimonCleanupException INVALID_ARGUMENT for foreign bytes, a decision concluded
     *     already, or a missing, doubled or foreign shard report
     */
    public static byte[] conclude(byte[] decision, List<byte[]> reports) {
        nonNull(decision, reports);
        byte[][] all = reports.toArray(new byte[0][]);
        nonNull((Object[]) all);
        return PaimonCleanup.expiryUnitsConclude(decision, all);
    }

    /**
     * Finishes the run (on the driver) after every delete unit: deletes the metadata, the
     * snapshot files, writes the hint and builds the report.
     *
     * @param table the table
     * @param exec the executor
     * @param run may be null
     * @param decision {@link Step#state()} of {@link #decide}, or the result of {@link #conclude}
     * @param mergedDeletes every delete unit's result, merged (empty when there was none)
     * @return the report ({@link ReportKind#EXPIRE_SNAPSHOTS}), as the single-process run's
     * @throws PaimonCleanupException INVALID_ARGUMENT for a missing result, STORAGE when a
     *     deletion failed (nothing of the metadata deleted), PATH_REFUSED, CANCELLED
     */
    public static Report finish(TableContext table, Executor exec, RunOptions run, final byte[] decision,
            final byte[] mergedDeletes) {
        nonNull(decision, mergedDeletes);
        long report = onDriver(table, exec, run, new DriverCall<Long>() {
            @Override
            public Long call(long ctx, long e, long token, ProgressListener p) {
                return Long.valueOf(PaimonCleanup.expiryUnitsFinish(ctx, e, decision, mergedDeletes, token, p));
            }
        }).longValue();
        try {
            return new Report(report);
        } finally {
            PaimonCleanup.reportFree(report);
        }
    }
}
