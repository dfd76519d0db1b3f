package org.apache.paimon.cleanup;

/**
 * Settings of a partition expiry. Unset fields take the table's partition.expiration-* and
 * partition.timestamp-* options, then Paimon's defaults (an expiration time is required
 * somewhere). A plain value.
 */
public final class PartitionExpireConfig {
    /** partition.expiration-strategy values. */
    public enum Strategy {
        /** The time in the partition values (Paimon's default). */
        VALUES_TIME,
        /** The last time a file was added to the partition. */
        UPDATE_TIME
    }

    Long expirationTimeMs;
    Strategy strategy;
    String timestampFormatter;
    String timestampPattern;
    Long maxExpires;
    Long batchSize;
    boolean dryRun;
    Long nowMs;

    /**
     * @param ms partition.expiration-time in milliseconds (positive)
     * @return this
     */
    public PartitionExpireConfig expirationTimeMs(long ms) {
        expirationTimeMs = Long.valueOf(ms);
        return this;
    }

    /**
     * @param s partition.expiration-strategy
     * @return this
     */
    public PartitionExpireConfig strategy(Strategy s) {
        strategy = s;
        return this;
    }

    /**
     * @param pattern partition.timestamp-formatter, e.g. {@code yyyyMMdd}
     * @return this
     */
    public PartitionExpireConfig timestampFormatter(String pattern) {
        timestampFormatter = pattern;
        return this;
    }

    /**
     * @param pattern partition.timestamp-pattern, e.g. {@code $dt $hr:00:00}
     * @return this
     */
    public PartitionExpireConfig timestampPattern(String pattern) {
        timestampPattern = pattern;
        return this;
    }

    /**
     * @param n partition.expiration-max-num (positive)
     * @return this
     */
    public PartitionExpireConfig maxExpires(long n) {
        maxExpires = Long.valueOf(n);
        return this;
    }

    /**
     * @param n partition.expiration-batch-size (positive)
     * @return this
     */
    public PartitionExpireConfig batchSize(long n) {
        batchSize = Long.valueOf(n);
        return this;
    }

    /**
     * @param on select and report, commit nothing
     * @return this
     */
    public PartitionExpireConfig dryRun(boolean on) {
        dryRun = on;
        return this;
    }

    /**
     * @param epochMs measure expiry from this time instead of the wall clock
     * @return this
     */
    public PartitionExpireConfig nowMs(long epochMs) {
        nowMs = Long.valueOf(epochMs);
        return this;
    }
}
