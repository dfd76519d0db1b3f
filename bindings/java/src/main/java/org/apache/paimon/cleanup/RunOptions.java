package org.apache.paimon.cleanup;

/**
 * Optional settings of one long operation: a progress listener and a cancellation token. A plain
 * value; an operation reads it when it starts.
 */
public final class RunOptions {
    private ProgressListener progress;
    private CancelToken cancelToken;

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

    /** @return the progress listener, or null */
    public ProgressListener progress() {
        return progress;
    }

    /** @return the cancellation token, or null */
    public CancelToken cancelToken() {
        return cancelToken;
    }
}
