package org.apache.paimon.cleanup;

/** Overview of a table's main branch (see {@code PaimonCleanupTableSummary}). Immutable. */
public final class TableSummary {
    private final long[] v;

    TableSummary(long[] values) {
        this.v = values.clone();
    }

    /** @return true when main has at least one snapshot */
    public boolean hasSnapshots() {
        return v[0] != 0;
    }

    /** @return id of the earliest snapshot (0 without snapshots) */
    public long earliestSnapshotId() {
        return v[1];
    }

    /** @return id of the latest snapshot (0 without snapshots) */
    public long latestSnapshotId() {
        return v[2];
    }

    /** @return number of snapshot files on main */
    public long snapshotCount() {
        return v[3];
    }

    /** @return number of tags */
    public long tagCount() {
        return v[4];
    }

    /** @return number of branches other than main */
    public long branchCount() {
        return v[5];
    }

    /** @return live data files of the latest snapshot */
    public long liveFileCount() {
        return v[6];
    }

    /** @return total size of those files in bytes */
    public long liveFileBytes() {
        return v[7];
    }

    @Override
    public String toString() {
        return "TableSummary{snapshots=" + snapshotCount() + " (" + earliestSnapshotId() + ".."
                + latestSnapshotId() + "), tags=" + tagCount() + ", branches=" + branchCount()
                + ", liveFiles=" + liveFileCount() + ", liveBytes=" + liveFileBytes() + "}";
    }
}
