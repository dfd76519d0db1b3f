package org.apache.paimon.cleanup;

import java.util.ArrayList;
import java.util.List;

/**
 * A cancellation flag. {@link #cancel()} (from any thread, also from a {@link ProgressListener})
 * stops every running operation whose {@link RunOptions} carry this token at its next check (it
 * throws {@link PaimonCleanupException} with {@link PaimonCleanupException#CANCELLED}), and makes
 * later operations fail at once, before they read anything. Once cancelled it stays cancelled.
 * Holds no native resources.
 */
public final class CancelToken {
    private final List<Long> running = new ArrayList<Long>();
    private boolean cancelled;

    /** Requests cancellation; calling it again has no further effect. */
    public synchronized void cancel() {
        cancelled = true;
        for (Long token : running) {
            PaimonCleanup.runCancel(token.longValue());
        }
    }

    /** @return true once {@link #cancel()} has been called */
    public synchronized boolean isCancelled() {
        return cancelled;
    }

    /** Watches the native token of one run (cancelled at once if this token already is). */
    synchronized void attach(long nativeToken) {
        running.add(Long.valueOf(nativeToken));
        if (cancelled) {
            PaimonCleanup.runCancel(nativeToken);
        }
    }

    /** Stops watching a run's native token (before the token is freed). */
    synchronized void detach(long nativeToken) {
        running.remove(Long.valueOf(nativeToken));
    }
}
