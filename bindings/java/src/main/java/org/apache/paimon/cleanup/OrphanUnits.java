package org.apache.paimon.cleanup;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Orphan-file removal split into units that an engine (Spark, Flink, ...) schedules on its own
 * workers. Every unit and every partial result is an opaque, versioned byte string: ship it,
 * store it, retry it. The single-process {@link TableContext#removeOrphanFiles} runs exactly these
 * steps in one process.
 *
 * <h2>Contract</h2>
 *
 * <pre>{@code
 * // driver
 * OrphanUnits.Plan plan = OrphanUnits.plan(table, exec, config, run);
 * // executors, any order, any parallelism, retried freely (units only read):
 * byte[] p = OrphanUnits.execute(exec, unit, hostOptions, run);      // one per plan unit
 * // anywhere: combine partial results, any order and grouping
 * byte[] merged = OrphanUnits.merge(p1, p2);  ...  (new byte[0] is the neutral element)
 * // driver
 * OrphanUnits.Decision d = OrphanUnits.decide(table, exec, config, run, plan.state(), merged);
 * // executors: each delete unit once (a retry is harmless: deleting a deleted file is a no-op)
 * byte[] r = OrphanUnits.execute(exec, deleteUnit, hostOptions, run); // one per d.deleteUnits()
 * byte[] deletes = OrphanUnits.merge(r1, r2); ...
 * // driver
 * Report report = OrphanUnits.finish(table, exec, run, d.decision(), deletes);
 * }</pre>
 *
 * <ol>
 *   <li>{@link #plan}: checks the cut-off (the same rules as the single-process run), resolves
 *       the data roots, walks the partition directories, reads every snapshot, tag and
 *       long-lived changelog of every branch and their manifest lists, and returns units:
 *       "list these directories" (a bounded group of partition / bucket directories or metadata
 *       directories) and "read these manifests" (a bounded slice of the distinct manifests and
 *       index manifests of every version of every branch), plus a driver-side state.
 *   <li>{@link #execute}: runs one unit anywhere. It opens the table's storage itself from the
 *       table URI and the options carried in the unit; credentials are NOT carried in units
 *       (option keys naming secrets, tokens, passwords or access keys are left out), so pass
 *       them in {@code hostOptions}, which also override the carried options. Returns a partial
 *       result. Plan units only read; a failed or cancelled plan unit changes nothing. A
 *       manifest that cannot be read does not fail the unit: the failure is carried in the
 *       partial result and {@link #decide} decides (a version that still needs it aborts).
 *   <li>{@link #merge}: combines two partial results. Associative and commutative: any order,
 *       any grouping give byte-identical results. An empty array is the neutral element.
 *   <li>{@link #decide}: on the driver, with every partial result of the plan's units merged.
 *       Lists the versions again until no new version appears (reading the new ones' manifests
 *       itself), fails if metadata a version still needs could not be read (nothing deleted),
 *       keeps every referenced file, every file whose name is referenced at another location,
 *       and every file the veto keeps, checks every path (roots, kinds, no symlinked
 *       directory), and returns delete units (none for a dry run) and the decision. A missing
 *       partial result (a unit not executed) means candidates not listed, so fewer deletions,
 *       or references not read: decide then fails because a needed manifest was never read.
 *   <li>Delete units are executed like plan units (each file is checked again before it is
 *       deleted). Run them in any order; a failed one leaves only orphans behind (never a
 *       referenced file) and a later run converges.
 *   <li>{@link #finish}: on the driver, after every delete unit: removes the data directories
 *       left empty and returns the same report as {@link TableContext#removeOrphanFiles}.
 * </ol>
 *
 * <p>Units of one plan belong to one run: execute them with the same library version (a unit of
 * another format version is refused with INVALID_ARGUMENT) and decide within the cut-off's
 * safety margin (the plan's cut-off is kept).
 *
 * <p>All methods are static and thread-safe; they block the calling thread. Failures throw
 * {@link PaimonCleanupException} with the library's status.
 */
public final class OrphanUnits {
    private OrphanUnits() {}

    /** What {@link #plan} returns: the driver-side state and the units to execute. */
    public static final class Plan {
        private final byte[] state;
        private final List<byte[]> units;

        Plan(byte[] state, List<byte[]> units) {
            this.state = state;
            this.units = units;
        }

        /** @return the driver-side state, for {@link #decide} (keep it on the driver) */
        public byte[] state() {
            return state;
        }

        /** @return the units to execute with {@link #execute}, each a self-contained byte string */
        public List<byte[]> units() {
            return units;
        }
    }

    /** What {@link #decide} returns: the decision (for {@link #finish}) and the delete units. */
    public static final class Decision {
        private final byte[] decision;
        private final List<byte[]> deleteUnits;

        Decision(byte[] decision, List<byte[]> deleteUnits) {
            this.decision = decision;
            this.deleteUnits = deleteUnits;
        }

        /** @return the decision, for {@link #finish} (keep it on the driver) */
        public byte[] decision() {
            return decision;
        }

        /** @return the delete units (empty for a dry run or when nothing is to be deleted) */
        public List<byte[]> deleteUnits() {
            return deleteUnits;
        }
    }

    private static List<byte[]> tail(byte[][] all) {
        List<byte[]> out = new ArrayList<>(Math.max(0, all.length - 1));
        for (int i = 1; i < all.length; i++) {
            out.add(all[i]);
        }
        return Collections.unmodifiableList(out);
    }

    /** Runs {@code body} with a native token watched by the caller's token, if any. */
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

    /**
     * Plans a run (on the driver).
     *
     * @param table the table (any branch: orphan removal is table-wide)
     * @param exec the executor
     * @param config the settings (null = the defaults); the veto is used by {@link #decide}
     * @param run may be null
     * @return the state and the units
     * @throws PaimonCleanupException INVALID_ARGUMENT for a bad cut-off, NOT_FOUND, MALFORMED,
     *     STORAGE when a version's metadata cannot be read, CANCELLED
     */
    public static Plan plan(TableContext table, Executor exec, OrphanConfig config, RunOptions run) {
        final long ctx = table.acquireHandle();
        try {
            final long e = exec.acquire();
            try {
                final long cfg = TableContext.orphanConfig(config);
                try {
                    byte[][] all = withToken(run, new TokenCall<byte[][]>() {
                        @Override
                        public byte[][] call(long token, ProgressListener p) {
                            return PaimonCleanup.orphanUnitsPlan(ctx, e, cfg, token, p);
                        }
                    });
                    return new Plan(all[0], tail(all));
                } finally {
                    PaimonCleanup.orphanConfigFree(cfg);
                }
            } finally {
                exec.release();
            }
        } finally {
            table.releaseHandle();
        }
    }

    /**
     * Executes one unit (a plan unit or a delete unit) anywhere.
     *
     * @param exec the executor of this JVM
     * @param unit a unit from {@link Plan#units()} or {@link Decision#deleteUnits()}
     * @param hostOptions options added to (and overriding) those carried in the unit, e.g. the
     *     storage credentials (may be null)
     * @param run may be null
     * @return the partial result, to {@link #merge}
     * @throws PaimonCleanupException INVALID_ARGUMENT for bytes that are not a unit of this
     *     format version, STORAGE, PATH_REFUSED (a delete unit naming a path outside the table's
     *     roots or of the wrong kind), CANCELLED
     */
    public static byte[] execute(
            Executor exec, final byte[] unit, Map<String, String> hostOptions, RunOptions run) {
        if (unit == null) {
            throw new PaimonCleanupException(PaimonCleanupException.NULL_POINTER, "unit is null");
        }
        int n = hostOptions == null ? 0 : hostOptions.size();
        final byte[][] keys = new byte[n][];
        final byte[][] values = new byte[n][];
        if (hostOptions != null) {
            int i = 0;
            for (Map.Entry<String, String> en : hostOptions.entrySet()) {
                keys[i] = PaimonCleanup.encode(en.getKey(), "option key");
                values[i] = PaimonCleanup.encode(en.getValue(), "value of option " + en.getKey());
                i++;
            }
        }
        final long e = exec.acquire();
        try {
            return withToken(run, new TokenCall<byte[]>() {
                @Override
                public byte[] call(long token, ProgressListener p) {
                    return PaimonCleanup.orphanUnitExecute(e, unit, keys, values, token, p);
                }
            });
        } finally {
            exec.release();
        }
    }

    /**
     * Combines two partial results (associative and commutative; an empty array is neutral).
     *
     * @param a a partial result, or an empty array
     * @param b a partial result, or an empty array
     * @return the combined partial result
     * @throws PaimonCleanupException INVALID_ARGUMENT for bytes that are not a partial result of
     *     this format version
     */
    public static byte[] merge(byte[] a, byte[] b) {
        if (a == null || b == null) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.NULL_POINTER, "a partial result is null");
        }
        return PaimonCleanup.orphanPartialsMerge(a, b);
    }

    /**
     * Decides what to delete (on the driver), with every safety rule of the single-process run.
     *
     * @param table the table the plan was made for
     * @param exec the executor
     * @param config the settings of the plan (the veto, if any, is asked here)
     * @param run may be null
     * @param state {@link Plan#state()}
     * @param merged every plan unit's partial result, merged
     * @return the decision and the delete units
     * @throws PaimonCleanupException NOT_FOUND / MALFORMED / STORAGE when metadata a version
     *     still needs could not be read (nothing deleted), CONFLICT when versions keep
     *     appearing, PATH_REFUSED, CANCELLED, INVALID_ARGUMENT for foreign bytes
     */
    public static Decision decide(
            TableContext table,
            Executor exec,
            OrphanConfig config,
            RunOptions run,
            final byte[] state,
            final byte[] merged) {
        if (state == null || merged == null) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.NULL_POINTER, "state or merged result is null");
        }
        final VetoListener veto = config == null ? null : config.veto;
        final long ctx = table.acquireHandle();
        try {
            final long e = exec.acquire();
            try {
                final long cfg = TableContext.orphanConfig(config);
                try {
                    byte[][] all = withToken(run, new TokenCall<byte[][]>() {
                        @Override
                        public byte[][] call(long token, ProgressListener p) {
                            return PaimonCleanup.orphanUnitsDecide(
                                    ctx, e, cfg, veto, state, merged, token, p);
                        }
                    });
                    return new Decision(all[0], tail(all));
                } finally {
                    PaimonCleanup.orphanConfigFree(cfg);
                }
            } finally {
                exec.release();
            }
        } finally {
            table.releaseHandle();
        }
    }

    /** What {@link #split} returns. */
    public static final class Split {
        private final byte[] summary;
        private final List<byte[]> shards;

        Split(byte[] summary, List<byte[]> shards) {
            this.summary = summary;
            this.shards = shards;
        }

        /** @return the summary (counters, failures, empty directories), for the driver */
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
        private final byte[] state;
        private final byte[] gate;
        private final boolean decide;

        Gated(byte[] state, byte[] gate, boolean decide) {
            this.state = state;
            this.gate = gate;
            this.decide = decide;
        }

        /** @return the driver's updated state, for the next gate and for {@link #conclude} */
        public byte[] state() {
            return state;
        }

        /** @return the gate every shard of this round decides with */
        public byte[] gate() {
            return gate;
        }

        /**
         * @return true when the shards must decide (again) with {@link #gate()}: after the first
         *     gate, and after one that found a new version; false confirms the round
         */
        public boolean decide() {
            return decide;
        }
    }

    /** What {@link #decideShard} returns. */
    public static final class ShardDecision {
        private final byte[] report;
        private final List<byte[]> deleteUnits;

        ShardDecision(byte[] report, List<byte[]> deleteUnits) {
            this.report = report;
            this.deleteUnits = deleteUnits;
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
     * Splits a plan unit's partial result (or several merged) into its summary and one piece
     * per shard, by the shard of each file name, for the sharded decision: shuffle the pieces
     * by shard (merge a shard's pieces with {@link #merge}) and merge the summaries.
     *
     * @param partial a whole partial result
     * @param shards the shard count, 1 to 65,536
     * @return the summary and the pieces
     */
    public static Split split(byte[] partial, int shards) {
        if (partial == null) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.NULL_POINTER, "the partial result is null");
        }
        byte[][] all = PaimonCleanup.orphanPartialSplit(partial, shards);
        return new Split(all[0], tail(all));
    }

    /**
     * The gate of the sharded decision (on the driver): lists the versions again until no new
     * one appears, reads the new ones' references, fails (nothing deleted) when metadata a
     * version still needs could not be read or a unit's summary is missing. Call it before the
     * shards decide and again after; while {@link Gated#decide()} is true the shards decide
     * (again) with the new gate.
     *
     * @param table the table
     * @param exec the executor
     * @param run may be null
     * @param state the plan's state, or the previous gate's
     * @param summary every plan unit's summary, merged
     * @param shards the shard count the results were split into
     * @return the new state, the gate, and whether the shards decide
     */
    public static Gated gate(
            TableContext table,
            Executor exec,
            RunOptions run,
            final byte[] state,
            final byte[] summary,
            final int shards) {
        if (state == null || summary == null) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.NULL_POINTER, "state or summary is null");
        }
        final long ctx = table.acquireHandle();
        try {
            final long e = exec.acquire();
            try {
                byte[][] all = withToken(run, new TokenCall<byte[][]>() {
                    @Override
                    public byte[][] call(long token, ProgressListener p) {
                        return PaimonCleanup.orphanUnitsGate(ctx, e, state, summary, shards, token, p);
                    }
                });
                return new Gated(all[0], all[1], all[2].length == 1 && all[2][0] == 1);
            } finally {
                exec.release();
            }
        } finally {
            table.releaseHandle();
        }
    }

    /**
     * Decides one shard (anywhere): keeps what is referenced by location or name and what the
     * veto keeps, checks every remaining path, and returns the shard's report and delete units.
     *
     * @param table the table
     * @param exec the executor
     * @param config the plan's config (its veto is asked here)
     * @param run may be null
     * @param gate {@link Gated#gate()} of the round
     * @param shard the shard
     * @param piece every plan unit's piece of this shard, merged
     * @return the report and the delete units
     */
    public static ShardDecision decideShard(
            TableContext table,
            Executor exec,
            OrphanConfig config,
            RunOptions run,
            final byte[] gate,
            final int shard,
            final byte[] piece) {
        if (gate == null || piece == null) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.NULL_POINTER, "gate or piece is null");
        }
        final VetoListener veto = config == null ? null : config.veto;
        final long ctx = table.acquireHandle();
        try {
            final long e = exec.acquire();
            try {
                final long cfg = TableContext.orphanConfig(config);
                try {
                    byte[][] all = withToken(run, new TokenCall<byte[][]>() {
                        @Override
                        public byte[][] call(long token, ProgressListener p) {
                            return PaimonCleanup.orphanShardDecide(
                                    ctx, e, cfg, veto, gate, shard, piece, token, p);
                        }
                    });
                    return new ShardDecision(all[0], tail(all));
                } finally {
                    PaimonCleanup.orphanConfigFree(cfg);
                }
            } finally {
                exec.release();
            }
        } finally {
            table.releaseHandle();
        }
    }

    /**
     * Concludes the sharded decision (on the driver) with the state of the gate that confirmed
     * the round and the round's report of every shard, each exactly once.
     *
     * @param state {@link Gated#state()} of the confirming gate
     * @param summary every plan unit's summary, merged
     * @param reports every shard's report
     * @return the decision, for {@link #finish}
     */
    public static byte[] conclude(byte[] state, byte[] summary, List<byte[]> reports) {
        if (state == null || summary == null || reports == null) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.NULL_POINTER, "state, summary or reports is null");
        }
        byte[][] all = reports.toArray(new byte[0][]);
        for (byte[] r : all) {
            if (r == null) {
                throw new PaimonCleanupException(
                        PaimonCleanupException.NULL_POINTER, "a shard report is null");
            }
        }
        return PaimonCleanup.orphanUnitsConclude(state, summary, all);
    }

    /**
     * Finishes a run (on the driver) after every delete unit: removes the data directories left
     * empty (not in a dry run) and builds the report.
     *
     * @param table the table
     * @param exec the executor
     * @param run may be null
     * @param decision {@link Decision#decision()}
     * @param mergedDeletes every delete unit's partial result, merged (an empty array when
     *     there was none)
     * @return the report ({@link ReportKind#REMOVE_ORPHAN_FILES}), as the single-process run's
     */
    public static Report finish(
            TableContext table,
            Executor exec,
            RunOptions run,
            final byte[] decision,
            final byte[] mergedDeletes) {
        if (decision == null || mergedDeletes == null) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.NULL_POINTER, "decision or merged result is null");
        }
        final long ctx = table.acquireHandle();
        try {
            final long e = exec.acquire();
            try {
                long report = withToken(run, new TokenCall<Long>() {
                    @Override
                    public Long call(long token, ProgressListener p) {
                        return Long.valueOf(PaimonCleanup.orphanUnitsFinish(
                                ctx, e, decision, mergedDeletes, token, p));
                    }
                }).longValue();
                try {
                    return new Report(report);
                } finally {
                    PaimonCleanup.reportFree(report);
                }
            } finally {
                exec.release();
            }
        } finally {
            table.releaseHandle();
        }
    }
}
