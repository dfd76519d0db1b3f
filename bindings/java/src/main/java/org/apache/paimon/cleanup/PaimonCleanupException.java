package org.apache.paimon.cleanup;

/**
 * A failed call of the library: its status code (the numbers of {@code PaimonCleanupStatus} in
 * paimon_cleanup.h) and its message. Unchecked, like the exceptions of most engine APIs.
 */
public class PaimonCleanupException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** An unusable argument or option value. */
    public static final int INVALID_ARGUMENT = 1;
    /** The table (or a file it needs) does not exist. */
    public static final int NOT_FOUND = 2;
    /** A metadata file cannot be decoded. */
    public static final int MALFORMED = 3;
    /** A table feature the library cannot handle safely. */
    public static final int UNSUPPORTED = 4;
    /** File system / object store I/O failure. */
    public static final int STORAGE = 5;
    /** A path outside the table's roots was refused. */
    public static final int PATH_REFUSED = 6;
    /** Cancelled through a {@link CancelToken}. */
    public static final int CANCELLED = 7;
    /** A commit lost its race, or a table invariant does not hold. */
    public static final int CONFLICT = 8;
    /** A bug in the library. */
    public static final int INTERNAL = 9;
    /** A required argument was missing. */
    public static final int NULL_POINTER = 10;
    /** A string was not valid UTF-8. */
    public static final int INVALID_UTF8 = 11;
    /** A panic inside the library, caught at the boundary. */
    public static final int PANIC = 12;
    /**
     * The run needed more memory than {@link RunOptions#maxMemory(long)} allows; it stopped while
     * planning, so nothing was deleted or committed.
     */
    public static final int MEMORY_LIMIT = 13;

    private final int status;
    private final String detail;

    /**
     * Creates an exception; called by the JNI glue and by argument checks.
     *
     * @param status the status code (never 0)
     * @param detail the library's message
     */
    public PaimonCleanupException(int status, String detail) {
        super(PaimonCleanup.statusName(status) + ": " + detail);
        this.status = status;
        this.detail = detail;
    }

    /** Called by the JNI glue: the message arrives as UTF-8 bytes. */
    static PaimonCleanupException fromNative(int status, byte[] message) {
        return new PaimonCleanupException(status, PaimonCleanup.decode(message));
    }

    /** @return the status code, e.g. {@link #NOT_FOUND} */
    public int status() {
        return status;
    }

    /** @return the library's name of the status, e.g. {@code "not_found"} */
    public String statusName() {
        return PaimonCleanup.statusName(status);
    }

    /** @return the library's message without the status prefix */
    public String detail() {
        return detail;
    }
}
