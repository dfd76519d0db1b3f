package org.apache.paimon.cleanup;

/** Which operation produced a report; {@link #code()} is the {@code PaimonCleanupReportKind}. */
public enum ReportKind {
    NONE(0, "none"),
    EXPIRE_SNAPSHOTS(1, "expire_snapshots"),
    EXPIRE_CHANGELOGS(2, "expire_changelogs"),
    DELETE_TAG(3, "delete_tag"),
    EXPIRE_TAGS(4, "expire_tags"),
    EXPIRE_CONSUMERS(5, "expire_consumers"),
    REMOVE_ORPHAN_FILES(6, "remove_orphan_files"),
    DROP_PARTITIONS(7, "drop_partitions"),
    EXPIRE_PARTITIONS(8, "expire_partitions"),
    MAINTAIN(9, "maintain");

    private final int code;
    private final String label;

    ReportKind(int code, String label) {
        this.code = code;
        this.label = label;
    }

    /** @return the stable number of the kind */
    public int code() {
        return code;
    }

    /** @return the library's name of the kind, e.g. {@code "expire_snapshots"} */
    public String label() {
        return label;
    }

    /**
     * @param code a kind number
     * @return the kind, or {@link #NONE} for a number this binding does not know
     */
    public static ReportKind of(int code) {
        ReportKind[] all = values();
        return code >= 0 && code < all.length ? all[code] : NONE;
    }
}
