package org.apache.paimon.cleanup;

/**
 * Settings of an orphan-file removal. Defaults: cut-off now minus 1 day, writers assumed running
 * (a cut-off within the last hour is refused), external data roots not cleaned, no veto, not a
 * dry run. A plain value.
 */
public final class OrphanConfig {
    Long olderThanMs;
    boolean dryRun;
    boolean noWritersRunning;
    boolean externalRootsOwned;
    int listConcurrency;
    int deleteConcurrency;
    VetoListener veto;

    /**
     * @param epochMs only files last modified before this may be deleted
     * @return this
     */
    public OrphanConfig olderThanMs(long epochMs) {
        olderThanMs = Long.valueOf(epochMs);
        return this;
    }

    /**
     * @param on list and report, delete nothing
     * @return this
     */
    public OrphanConfig dryRun(boolean on) {
        dryRun = on;
        return this;
    }

    /**
     * DANGER: declares that nothing writes to the table during the run, which allows a cut-off
     * within the last hour (files of an uncommitted write look like orphans).
     *
     * @param on whether no writer runs
     * @return this
     */
    public OrphanConfig noWritersRunning(boolean on) {
        noWritersRunning = on;
        return this;
    }

    /**
     * DANGER: declares that the table's external data roots belong to it alone, so they are
     * listed and cleaned. By default they are skipped: Paimon writes external files without the
     * table name, so tables configured with one root share its directories.
     *
     * @param on whether the external roots belong to this table alone
     * @return this
     */
    public OrphanConfig externalRootsOwned(boolean on) {
        externalRootsOwned = on;
        return this;
    }

    /**
     * @param n directory listings in flight (0 = the executor's I/O concurrency)
     * @return this
     */
    public OrphanConfig listConcurrency(int n) {
        listConcurrency = n;
        return this;
    }

    /**
     * @param n deletions in flight (0 = the executor's I/O concurrency)
     * @return this
     */
    public OrphanConfig deleteConcurrency(int n) {
        deleteConcurrency = n;
        return this;
    }

    /**
     * @param listener asked before each deletion; true keeps the file (null = none)
     * @return this
     */
    public OrphanConfig veto(VetoListener listener) {
        veto = listener;
        return this;
    }
}
