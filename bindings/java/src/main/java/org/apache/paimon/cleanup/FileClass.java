package org.apache.paimon.cleanup;

/** Kind of file a report counts; {@link #code()} is the {@code PaimonCleanupFileClass} number. */
public enum FileClass {
    DATA(0, "data"),
    CHANGELOG_DATA(1, "changelog_data"),
    MANIFEST(2, "manifest"),
    MANIFEST_LIST(3, "manifest_list"),
    INDEX_MANIFEST(4, "index_manifest"),
    INDEX(5, "index"),
    STATISTICS(6, "statistics"),
    SNAPSHOT_META(7, "snapshot_meta"),
    CHANGELOG_META(8, "changelog_meta"),
    TAG_META(9, "tag_meta"),
    CONSUMER_META(10, "consumer_meta"),
    OTHER(11, "other");

    private final int code;
    private final String label;

    FileClass(int code, String label) {
        this.code = code;
        this.label = label;
    }

    /** @return the stable number of the class */
    public int code() {
        return code;
    }

    /** @return the library's name of the class, e.g. {@code "manifest_list"} */
    public String label() {
        return label;
    }

    /**
     * @param code a class number
     * @return the class, or {@link #OTHER} for a number this binding does not know
     */
    public static FileClass of(int code) {
        FileClass[] all = values();
        return code >= 0 && code < all.length ? all[code] : OTHER;
    }
}
