package org.apache.paimon.cleanup;

/**
 * Receives the library's log events of one operation ({@link RunOptions#log}). Called on the
 * thread that called the operation or on one of the library's native threads (attached to the JVM
 * as daemon threads by the JNI glue), never after the operation returned; calls of one operation
 * never overlap, but two operations sharing one listener may call it concurrently. It must return
 * quickly and must not call an operation of this library; it may call {@link CancelToken#cancel()}.
 * An exception it throws stops the operation and is rethrown by the operation once it returned.
 */
public interface LogListener {
    /** Level of errors. */
    int ERROR = 1;
    /** Level of warnings. */
    int WARN = 2;
    /** A few lines per run. */
    int INFO = 3;
    /** A line per storage request. */
    int DEBUG = 4;
    /** Everything. */
    int TRACE = 5;

    /**
     * @param level {@link #ERROR} to {@link #TRACE}
     * @param target where the event comes from (a Rust module path)
     * @param message the text, then {@code key=value} fields
     */
    void onLog(int level, String target, String message);
}
