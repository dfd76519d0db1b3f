package org.apache.paimon.cleanup;

/**
 * Optional settings of one long operation: a progress listener, a cancellation token and a memory
 * bound. A plain value; an operation reads it when it starts.
 */
public final class RunOptions {
    private ProgressListener progress;
    private CancelToken cancelToken;
    private long maxMemory;
    private LogListener log;
    private int logLevel = LogListener.INFO;

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

    /**
     * Sets (or, with null, removes) the log listener: the library's log events of the operation
     * at {@code minLevel} or more severe (C: {@code paimon_cleanup_run_options_set_log}). Off by
     * default; nothing is installed process-wide, so only this operation's events reach it.
     *
     * @param listener the listener, or null for none
     * @param minLevel {@link LogListener#ERROR} (1) to {@link LogListener#TRACE} (5); another
     *     value makes the operation fail with INVALID_ARGUMENT
     * @return this
     */
    public RunOptions log(LogListener listener, int minLevel) {
        this.log = listener;
        this.logLevel = minLevel;
        return this;
    }

    /** @return the log listener, or null */
    public LogListener log() {
        return log;
    }

    /** @return the least severe level passed to the log listener */
    public int logLevel() {
        return logLevel;
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
