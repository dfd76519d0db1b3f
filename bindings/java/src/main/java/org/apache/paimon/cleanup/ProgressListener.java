package org.apache.paimon.cleanup;

/**
 * Receives the progress of a long operation. Called on the thread that called the operation or
 * on one of the executor's native worker threads (attached to the JVM as daemon threads by the
 * JNI glue); calls of one operation never overlap, but two operations sharing one listener may
 * call it concurrently. It must return quickly and must not call an operation of this library;
 * it may call {@link CancelToken#cancel()}. An exception it throws stops the operation and is
 * rethrown by the operation once it has returned.
 */
public interface ProgressListener {
    /**
     * @param phase the current step, e.g. {@code "data files"}
     * @param done items of the step processed so far
     * @param total items of the step in all (0 = unknown)
     * @param bytes bytes deleted (in a dry run: deletable) so far in the whole run
     */
    void onProgress(String phase, long done, long total, long bytes);
}
