package org.apache.paimon.cleanup;

/**
 * Settings of a snapshot or changelog expiry. Every field starts unset: the table's option
 * applies (schema options overridden by the context's options), then Paimon's default. Values are
 * checked by the library when the operation starts ({@link PaimonCleanupException#INVALID_ARGUMENT}).
 * A plain value (no native resources).
 */
public final class ExpireConfig {
    Long retainMin;
    Long retainMax;
    Long timeRetainedMs;
    Long olderThanMs;
    Long maxExpires;
    Boolean cleanEmptyDirs;
    boolean dryRun;
    boolean refuseIfTagsPin;
    boolean deleteAllChangelogs;

    /**
     * @param n snapshot.num-retained.min (at least 1)
     * @return this
     */
    public ExpireConfig retainMin(long n) {
        retainMin = Long.valueOf(n);
        return this;
    }

    /**
     * @param n snapshot.num-retained.max (at least 1)
     * @return this
     */
    public ExpireConfig retainMax(long n) {
        retainMax = Long.valueOf(n);
        return this;
    }

    /**
     * @param ms snapshot.time-retained in milliseconds (0 = no age protection)
     * @return this
     */
    public ExpireConfig timeRetainedMs(long ms) {
        timeRetainedMs = Long.valueOf(ms);
        olderThanMs = null;
        return this;
    }

    /**
     * @param epochMs absolute cut-off instead of the time retained: snapshots committed at or
     *     after it are kept; a cut-off in the future is refused
     * @return this
     */
    public ExpireConfig olderThanMs(long epochMs) {
        olderThanMs = Long.valueOf(epochMs);
        timeRetainedMs = null;
        return this;
    }

    /**
     * @param n snapshot.expire.limit: at most this many per run (at least 1)
     * @return this
     */
    public ExpireConfig maxExpires(long n) {
        maxExpires = Long.valueOf(n);
        return this;
    }

    /**
     * @param on snapshot.clean-empty-directories
     * @return this
     */
    public ExpireConfig cleanEmptyDirs(boolean on) {
        cleanEmptyDirs = Boolean.valueOf(on);
        return this;
    }

    /**
     * @param on compute and report, change nothing
     * @return this
     */
    public ExpireConfig dryRun(boolean on) {
        dryRun = on;
        return this;
    }

    /**
     * @param on refuse (CONFLICT) when a tag pins a snapshot that would expire
     * @return this
     */
    public ExpireConfig refuseIfTagsPin(boolean on) {
        refuseIfTagsPin = on;
        return this;
    }

    /**
     * @param on changelog expiry: remove every changelog older than the earliest snapshot
     * @return this
     */
    public ExpireConfig deleteAllChangelogs(boolean on) {
        deleteAllChangelogs = on;
        return this;
    }
}
