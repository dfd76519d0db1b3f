package org.apache.paimon.cleanup;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A table: its location and the options used to reach and read it (storage credentials,
 * endpoint, ... and overrides of table options). Every maintenance operation is a method taking
 * the {@link Executor} to run on and optional {@link RunOptions}; it blocks the calling thread,
 * returns a {@link Report} and throws {@link PaimonCleanupException} on failure (or the exception
 * a listener threw). Thread-safe; {@link #close()} waits for the operations in flight.
 */
public final class TableContext implements AutoCloseable {
    /** One native operation call: returns the native report handle. */
    private interface Op {
        long call(long ctx, long exec, long token, ProgressListener progress);
    }

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private long handle;

    /**
     * Creates a context. The table is not opened here: a missing table is reported by the
     * operations (NOT_FOUND).
     *
     * @param tableUri a local path, {@code file://}, {@code s3://}, ... URI of the table directory
     * @param options Paimon option names to values (may be null or empty)
     * @throws PaimonCleanupException INVALID_ARGUMENT for an empty URI or an empty key
     */
    public TableContext(String tableUri, Map<String, String> options) {
        Map<String, String> opts = options == null ? Collections.<String, String>emptyMap() : options;
        byte[][] keys = new byte[opts.size()][];
        byte[][] values = new byte[opts.size()][];
        int i = 0;
        for (Map.Entry<String, String> e : opts.entrySet()) {
            keys[i] = PaimonCleanup.encode(e.getKey(), "option key");
            values[i] = PaimonCleanup.encode(e.getValue(), "value of option " + e.getKey());
            i++;
        }
        handle = PaimonCleanup.contextNew(PaimonCleanup.encode(tableUri, "tableUri"), keys, values);
    }

    /**
     * The option key that selects the branch every operation of a context works on (default
     * {@code main}), like Paimon Java's {@code branch} table option. A table URI ending in
     * {@code <table>$branch_<name>} names the branch too.
     */
    public static final String BRANCH_OPTION = "branch";

    /**
     * Creates a context on branch {@code branch}: expiry, tags, consumers and partitions change
     * only that branch's versions and keep every file any branch reads; orphan removal is
     * table-wide.
     *
     * @param tableUri the table directory
     * @param branch the branch name ({@code main} for the main branch)
     * @param options Paimon option names to values (may be null or empty)
     * @throws PaimonCleanupException INVALID_ARGUMENT for an empty or path-like branch name, or
     *     one that disagrees with a {@code $branch_} suffix of the URI
     */
    public static TableContext onBranch(String tableUri, String branch, Map<String, String> options) {
        Map<String, String> all = new java.util.HashMap<>();
        if (options != null) {
            all.putAll(options);
        }
        all.put(BRANCH_OPTION, branch);
        return new TableContext(tableUri, all);
    }

    /**
     * Creates a context without options.
     *
     * @param tableUri the table directory
     * @see #TableContext(String, Map)
     */
    public TableContext(String tableUri) {
        this(tableUri, null);
    }

    private long acquire() {
        lock.readLock().lock();
        if (handle == 0) {
            lock.readLock().unlock();
            throw new PaimonCleanupException(
                    PaimonCleanupException.INVALID_ARGUMENT, "the table context is closed");
        }
        return handle;
    }

    /**
     * Reads the table (read-only) and returns an overview of its main branch.
     *
     * @param exec the executor to run on
     * @return the summary
     */
    public TableSummary summary(Executor exec) {
        long ctx = acquire();
        try {
            long e = exec.acquire();
            try {
                return new TableSummary(PaimonCleanup.tableSummary(ctx, e));
            } finally {
                exec.release();
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Runs one operation with a per-call native cancellation token watched by the caller's. */
    private Report run(Executor exec, RunOptions run, Op op) {
        CancelToken cancel = run == null ? null : run.cancelToken();
        ProgressListener progress = run == null ? null : run.progress();
        long ctx = acquire();
        try {
            long e = exec.acquire();
            try {
                long token = PaimonCleanup.runNew(run == null ? 0 : run.maxMemory(),
                        run == null ? null : run.log(), run == null ? 0 : run.logLevel());
                try {
                    if (cancel != null) {
                        cancel.attach(token);
                    }
                    long report = op.call(ctx, e, token, progress);
                    try {
                        return new Report(report);
                    } finally {
                        PaimonCleanup.reportFree(report);
                    }
                } finally {
                    if (cancel != null) {
                        cancel.detach(token);
                    }
                    PaimonCleanup.runFree(token);
                }
            } finally {
                exec.release();
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    static long expireConfig(ExpireConfig c) {
        long cfg = PaimonCleanup.expireConfigNew();
        try {
            if (c.retainMin != null) {
                PaimonCleanup.expireConfigSet(cfg, 0, c.retainMin.longValue());
            }
            if (c.retainMax != null) {
                PaimonCleanup.expireConfigSet(cfg, 1, c.retainMax.longValue());
            }
            if (c.timeRetainedMs != null) {
                PaimonCleanup.expireConfigSet(cfg, 2, c.timeRetainedMs.longValue());
            }
            if (c.olderThanMs != null) {
                PaimonCleanup.expireConfigSet(cfg, 3, c.olderThanMs.longValue());
            }
            if (c.maxExpires != null) {
                PaimonCleanup.expireConfigSet(cfg, 4, c.maxExpires.longValue());
            }
            if (c.cleanEmptyDirs != null) {
                PaimonCleanup.expireConfigSet(cfg, 5, c.cleanEmptyDirs.booleanValue() ? 1 : 0);
            }
            PaimonCleanup.expireConfigSet(cfg, 6, c.dryRun ? 1 : 0);
            PaimonCleanup.expireConfigSet(cfg, 7, c.refuseIfTagsPin ? 1 : 0);
            PaimonCleanup.expireConfigSet(cfg, 8, c.deleteAllChangelogs ? 1 : 0);
            return cfg;
        } catch (RuntimeException e) {
            PaimonCleanup.expireConfigFree(cfg);
            throw e;
        }
    }

    private Report expire(Executor exec, ExpireConfig config, RunOptions run, final boolean changelogs) {
        final long cfg = expireConfig(config == null ? new ExpireConfig() : config);
        try {
            return run(exec, run, new Op() {
                @Override
                public long call(long ctx, long e, long token, ProgressListener p) {
                    return PaimonCleanup.expire(ctx, e, cfg, changelogs, token, p);
                }
            });
        } finally {
            PaimonCleanup.expireConfigFree(cfg);
        }
    }

    /**
     * Expires old snapshots of main and deletes every file only they referenced, in crash-safe
     * order. Files needed by retained snapshots, tags, branches, changelogs or consumers are never
     * deleted.
     *
     * @param exec the executor
     * @param config the settings (null = every setting from the table's options)
     * @param run progress listener and cancellation token (may be null)
     * @return the report ({@link ReportKind#EXPIRE_SNAPSHOTS})
     */
    public Report expireSnapshots(Executor exec, ExpireConfig config, RunOptions run) {
        return expire(exec, config, run, false);
    }

    /**
     * Expires long-lived changelogs (decoupled changelog lifecycle) and their files.
     *
     * @param exec the executor
     * @param config the settings (null = the table's options)
     * @param run may be null
     * @return the report ({@link ReportKind#EXPIRE_CHANGELOGS})
     */
    public Report expireChangelogs(Executor exec, ExpireConfig config, RunOptions run) {
        return expire(exec, config, run, true);
    }

    /**
     * Deletes a tag and the files only it kept. A missing tag is listed in {@link Report#missing()}.
     *
     * @param exec the executor
     * @param tag the tag name
     * @param dryRun report only
     * @param run may be null
     * @return the report ({@link ReportKind#DELETE_TAG})
     */
    public Report deleteTag(Executor exec, String tag, final boolean dryRun, RunOptions run) {
        final byte[] name = PaimonCleanup.encode(tag, "tag");
        return run(exec, run, new Op() {
            @Override
            public long call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.deleteTag(ctx, e, name, dryRun, token, p);
            }
        });
    }

    /**
     * Expires tags whose retention passed and, when {@code olderThanMs} &gt; 0, tags created before it.
     *
     * @param exec the executor
     * @param olderThanMs epoch milliseconds, or 0
     * @param dryRun report only
     * @param run may be null
     * @return the report ({@link ReportKind#EXPIRE_TAGS})
     */
    public Report expireTags(Executor exec, final long olderThanMs, final boolean dryRun, RunOptions run) {
        return run(exec, run, new Op() {
            @Override
            public long call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.expireTags(ctx, e, olderThanMs, dryRun, token, p);
            }
        });
    }

    /**
     * Expires consumers that have not advanced for {@code expirationMs}.
     *
     * @param exec the executor
     * @param expirationMs milliseconds (0 = the table's consumer.expiration-time)
     * @param dryRun report only
     * @param run may be null
     * @return the report ({@link ReportKind#EXPIRE_CONSUMERS})
     */
    public Report expireConsumers(Executor exec, final long expirationMs, final boolean dryRun, RunOptions run) {
        if (expirationMs < 0) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.INVALID_ARGUMENT, "expirationMs must not be negative");
        }
        return run(exec, run, new Op() {
            @Override
            public long call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.expireConsumers(ctx, e, expirationMs, dryRun, token, p);
            }
        });
    }

    /**
     * Runs what the table's options ask for: tag, consumer, snapshot and changelog expiry.
     *
     * @param exec the executor
     * @param dryRun report only
     * @param run may be null
     * @return the report ({@link ReportKind#MAINTAIN}; one {@link Report#steps()} entry per step)
     */
    public Report maintain(Executor exec, final boolean dryRun, RunOptions run) {
        return run(exec, run, new Op() {
            @Override
            public long call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.maintain(ctx, e, dryRun, token, p);
            }
        });
    }

    /**
     * Removes files older than the cut-off that no snapshot, tag, branch or changelog references.
     *
     * @param exec the executor
     * @param config the settings (null = the defaults)
     * @param run may be null
     * @return the report ({@link ReportKind#REMOVE_ORPHAN_FILES})
     */
    public Report removeOrphanFiles(Executor exec, OrphanConfig config, RunOptions run) {
        final long cfg = orphanConfig(config);
        try {
            final VetoListener veto = config == null ? null : config.veto;
            return run(exec, run, new Op() {
                @Override
                public long call(long ctx, long e, long token, ProgressListener p) {
                    return PaimonCleanup.removeOrphanFiles(ctx, e, cfg, veto, token, p);
                }
            });
        } finally {
            PaimonCleanup.orphanConfigFree(cfg);
        }
    }

    /** A native orphan config with the values of {@code config} (null = the defaults), except the veto. */
    static long orphanConfig(OrphanConfig config) {
        OrphanConfig c = config == null ? new OrphanConfig() : config;
        long cfg = PaimonCleanup.orphanConfigNew();
        boolean ok = false;
        try {
            if (c.olderThanMs != null) {
                PaimonCleanup.orphanConfigSet(cfg, 0, c.olderThanMs.longValue());
            }
            PaimonCleanup.orphanConfigSet(cfg, 1, c.dryRun ? 1 : 0);
            PaimonCleanup.orphanConfigSet(cfg, 2, c.noWritersRunning ? 1 : 0);
            PaimonCleanup.orphanConfigSet(cfg, 3, c.listConcurrency);
            PaimonCleanup.orphanConfigSet(cfg, 4, c.deleteConcurrency);
            PaimonCleanup.orphanConfigSet(cfg, 5, c.externalRootsOwned ? 1 : 0);
            ok = true;
            return cfg;
        } finally {
            if (!ok) {
                PaimonCleanup.orphanConfigFree(cfg);
            }
        }
    }

    /** Read-locks the context for one call and returns its handle; pair with {@link #releaseHandle()}. */
    long acquireHandle() {
        return acquire();
    }

    void releaseHandle() {
        lock.readLock().unlock();
    }

    /**
     * Drops partitions: one OVERWRITE commit marks every live file of the matching partitions
     * deleted (the files go with a later snapshot expiry). Nothing is committed on failure.
     *
     * @param exec the executor
     * @param specs partition specs: key to value, matched against the partition values (not
     *     the directory names): null or the table's default partition name means NULL, "" the
     *     empty string, " " one space; other types as in the directory name or SQL; a prefix of
     *     the partition keys matches every partition below it
     * @param run may be null
     * @return the report ({@link ReportKind#DROP_PARTITIONS})
     */
    public Report dropPartitions(Executor exec, List<Map<String, String>> specs, RunOptions run) {
        return dropPartitions(exec, specs, run, false);
    }

    /**
     * Reports what {@link #dropPartitions} would do now, committing nothing: the matching
     * partitions of the latest snapshot and the live files, rows and bytes a drop would mark
     * deleted (a dry-run report without snapshot ids). Specs are checked as by dropPartitions
     * (same errors); a writer that commits in between can change what a later drop commits.
     *
     * @param exec the executor
     * @param specs the partitions, as for {@link #dropPartitions}
     * @param run may be null
     * @return the report ({@link ReportKind#DROP_PARTITIONS}, dry run)
     */
    public Report previewDropPartitions(Executor exec, List<Map<String, String>> specs, RunOptions run) {
        return dropPartitions(exec, specs, run, true);
    }

    private Report dropPartitions(Executor exec, List<Map<String, String>> specs, RunOptions run,
            final boolean preview) {
        int n = specs == null ? 0 : specs.size();
        final byte[][][] keys = new byte[n][][];
        final byte[][][] values = new byte[n][][];
        for (int i = 0; i < n; i++) {
            Map<String, String> spec = specs.get(i);
            int m = spec == null ? 0 : spec.size();
            keys[i] = new byte[m][];
            values[i] = new byte[m][];
            if (spec == null) {
                continue;
            }
            int j = 0;
            for (Map.Entry<String, String> e : spec.entrySet()) {
                keys[i][j] = PaimonCleanup.encode(e.getKey(), "partition key");
                values[i][j] = e.getValue() == null ? null : PaimonCleanup.encode(e.getValue(), "partition value");
                j++;
            }
        }
        return run(exec, run, new Op() {
            @Override
            public long call(long ctx, long e, long token, ProgressListener p) {
                return PaimonCleanup.dropPartitions(ctx, e, keys, values, preview, token, p);
            }
        });
    }

    /**
     * Drops the partitions older than the expiration time (one OVERWRITE commit per batch).
     *
     * @param exec the executor
     * @param config the settings (null = the table's options)
     * @param run may be null
     * @return the report ({@link ReportKind#EXPIRE_PARTITIONS})
     */
    public Report expirePartitions(Executor exec, PartitionExpireConfig config, RunOptions run) {
        PartitionExpireConfig c = config == null ? new PartitionExpireConfig() : config;
        final long cfg = PaimonCleanup.partitionExpireConfigNew();
        try {
            if (c.expirationTimeMs != null) {
                PaimonCleanup.partitionExpireConfigSet(cfg, 0, c.expirationTimeMs.longValue());
            }
            if (c.strategy != null) {
                PaimonCleanup.partitionExpireConfigSet(cfg, 1, c.strategy.ordinal());
            }
            if (c.maxExpires != null) {
                PaimonCleanup.partitionExpireConfigSet(cfg, 2, c.maxExpires.longValue());
            }
            if (c.batchSize != null) {
                PaimonCleanup.partitionExpireConfigSet(cfg, 3, c.batchSize.longValue());
            }
            PaimonCleanup.partitionExpireConfigSet(cfg, 4, c.dryRun ? 1 : 0);
            if (c.nowMs != null) {
                PaimonCleanup.partitionExpireConfigSet(cfg, 5, c.nowMs.longValue());
            }
            if (c.timestampFormatter != null) {
                PaimonCleanup.partitionExpireConfigSetString(
                        cfg, 0, PaimonCleanup.encode(c.timestampFormatter, "timestampFormatter"));
            }
            if (c.timestampPattern != null) {
                PaimonCleanup.partitionExpireConfigSetString(
                        cfg, 1, PaimonCleanup.encode(c.timestampPattern, "timestampPattern"));
            }
            return run(exec, run, new Op() {
                @Override
                public long call(long ctx, long e, long token, ProgressListener p) {
                    return PaimonCleanup.expirePartitions(ctx, e, cfg, token, p);
                }
            });
        } finally {
            PaimonCleanup.partitionExpireConfigFree(cfg);
        }
    }

    /** Waits for the operations in flight and frees the context. Idempotent. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (handle != 0) {
                PaimonCleanup.contextFree(handle);
                handle = 0;
            }
        } finally {
            lock.writeLock().unlock();
        }
    }
}
