package org.apache.paimon.cleanup;

/**
 * Optional settings of one long operation: a progress listener, a cancellation token and a memory
 * bound. A plain value; an operation reads it when it starts.
 */
public final class RunOptions {
    private ProgressListener progress;
    private CancelToken cancelToken;
    private long maxMemory;

    /**
     * @param listener the progress listener, or null for none
     * @return this
     */
    public RunOptions progress(ProgressListener listener) {
        this.progress = listener;
        return this;
    }

    /**
     * @param token the cancellation token, or null for none
     * @return this
     */
    public RunOptions cancelToken(CancelToken token) {
        this.cancelToken = token;
        return this;
    }

    /**
     * Sets (or, with 0, removes) the memory bound: a bound, in bytes, on what the operation's
     * large structures (candidate files, protection's reduced manifests, merged live entries, the
     * deletion plan, the report's paths) may hold at once. An operation whose plan needs more
     * fails with {@link PaimonCleanupException.Status#INVALID_ARGUMENT} while planning, before it
     * deletes or commits anything (C: {@code paimon_cleanup_run_options_set_max_memory}). No
     * bound by default.
     *
     * @param bytes the bound in bytes, or 0 for none
     * @return this
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public RunOptions maxMemory(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("maxMemory must not be negative: " + bytes);
        }
        this.maxMemory = bytes;
        return this;
    }

    /** @return the memory bound in bytes, or 0 when there is none */
    public long maxMemory() {
        return maxMemory;
    }

    /** @return the progress listener, or null */
    public ProgressListener progress() {
        return progress;
    }

    /** @return the cancellation token, or null */
    public CancelToken cancelToken() {
        return cancelToken;
    }
}
