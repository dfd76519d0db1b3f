package org.apache.paimon.cleanup;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The library's worker threads and I/O concurrency. A JVM normally creates one (2-4 workers are
 * usually enough inside an engine) and shares it between threads and tables. Thread-safe;
 * {@link #close()} waits for the operations in flight, then stops the worker threads. Not closing
 * it leaks its threads: use try-with-resources or close it on shutdown.
 */
public final class Executor implements AutoCloseable {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private long handle;

    /**
     * @param workerThreads worker threads (0 = one per CPU; at most 1024)
     * @throws PaimonCleanupException INVALID_ARGUMENT when out of range
     */
    public Executor(int workerThreads) {
        if (workerThreads < 0) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.INVALID_ARGUMENT, "workerThreads must not be negative");
        }
        handle = PaimonCleanup.executorNew(workerThreads);
    }

    /** Read-locks the executor for one call and returns its handle; pair with {@link #release()}. */
    long acquire() {
        lock.readLock().lock();
        if (handle == 0) {
            lock.readLock().unlock();
            throw new PaimonCleanupException(
                    PaimonCleanupException.INVALID_ARGUMENT, "the executor is closed");
        }
        return handle;
    }

    void release() {
        lock.readLock().unlock();
    }

    /**
     * @param n storage requests in flight for operations started afterwards (0 = automatic: 8 on
     *     a local file system, 64 on object stores; at most 4096)
     */
    public void setIoConcurrency(int n) {
        if (n < 0) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.INVALID_ARGUMENT, "I/O concurrency must not be negative");
        }
        long h = acquire();
        try {
            PaimonCleanup.executorSetIoConcurrency(h, n);
        } finally {
            release();
        }
    }

    /** @return the resolved number of worker threads */
    public int workerThreads() {
        long h = acquire();
        try {
            return PaimonCleanup.executorWorkerThreads(h);
        } finally {
            release();
        }
    }

    /** @return the configured I/O concurrency (0 = automatic) */
    public int ioConcurrency() {
        long h = acquire();
        try {
            return PaimonCleanup.executorIoConcurrency(h);
        } finally {
            release();
        }
    }

    /** Waits for the operations in flight, stops the worker threads, frees the executor. Idempotent. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (handle != 0) {
                PaimonCleanup.executorFree(handle);
                handle = 0;
            }
        } finally {
            lock.writeLock().unlock();
        }
    }
}
