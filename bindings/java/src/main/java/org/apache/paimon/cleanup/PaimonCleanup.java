package org.apache.paimon.cleanup;

import java.nio.charset.Charset;

/**
 * Entry point of the Java binding of paimon-cleanup (Apache Paimon table maintenance through the
 * library's C ABI and a small JNI glue, libpaimon_cleanup_jni).
 *
 * <pre>{@code
 * try (Executor exec = new Executor(4);                       // one per JVM, shared
 *      TableContext table = new TableContext("s3://bucket/wh/db.db/t", options)) {
 *     Report r = table.expireSnapshots(exec, new ExpireConfig().retainMin(10), null);
 * } catch (PaimonCleanupException e) {
 *     if (e.status() == PaimonCleanupException.NOT_FOUND) { ... }
 * }
 * }</pre>
 *
 * <p>Loading: the class loads {@code libpaimon_cleanup_jni.so} with {@code System.loadLibrary}
 * (so {@code -Djava.library.path=<dir>}), or the file named by the system property
 * {@code paimon.cleanup.jni.library}. The JNI library links the Rust library statically, so it is
 * the only native file to ship. At start-up it checks that the library implements the ABI the
 * glue was compiled against.
 *
 * <p>Threads: {@link Executor} and {@link TableContext} are thread-safe; operations block the
 * calling thread. Listeners may be called on native worker threads, which the glue attaches to
 * the JVM as daemon threads (once per thread; detached when the thread ends).
 *
 * <p>Java 8 compatible. Every string crosses the boundary as UTF-8 bytes.
 */
public final class PaimonCleanup {
    /** System property naming the JNI library file to load instead of java.library.path. */
    public static final String LIBRARY_PROPERTY = "paimon.cleanup.jni.library";

    static final Charset UTF8 = Charset.forName("UTF-8");

    static {
        String path = System.getProperty(LIBRARY_PROPERTY);
        if (path != null && !path.isEmpty()) {
            System.load(path);
        } else {
            System.loadLibrary("paimon_cleanup_jni");
        }
        if (abiVersion0() != glueAbiVersion0()) {
            throw new UnsatisfiedLinkError("paimon-cleanup: library ABI " + abiVersion0()
                    + " differs from the ABI " + glueAbiVersion0() + " of the JNI glue");
        }
    }

    private PaimonCleanup() {}

    /** @return the version of the loaded library, e.g. {@code "0.1.0"} */
    public static String version() {
        return decode(version0());
    }

    /** @return the C ABI version of the loaded library */
    public static int abiVersion() {
        return abiVersion0();
    }

    /**
     * @param status a status code
     * @return its name, e.g. {@code "not_found"} ("unknown" if unknown)
     */
    public static String statusName(int status) {
        return decode(statusName0(status));
    }

    /**
     * Parses an {@code older_than} cut-off as Paimon's Java procedures and the CLI's
     * {@code --older-than} take it: a timestamp ({@code "2024-01-01 12:00:00"}, the process's
     * local time zone unless it ends with {@code Z} or an offset) or a duration counted back from
     * {@code nowMs} ({@code "1 d"}, {@code "30 min"}). The result goes to
     * {@link ExpireConfig} or {@link OrphanConfig} as their {@code olderThanMs}.
     *
     * @param text the cut-off text
     * @param nowMs "now" in milliseconds since the Unix epoch (durations count back from it)
     * @return the cut-off in milliseconds since the Unix epoch
     * @throws PaimonCleanupException INVALID_ARGUMENT for a bare number, an invalid date or a
     *     cut-off after {@code nowMs}; NULL_POINTER for a null text
     */
    public static long parseOlderThan(String text, long nowMs) {
        return parseOlderThan0(encode(text, "older_than"), nowMs);
    }

    /**
     * Lists the tables of the local filesystem-catalog warehouse {@code root} ({@code
     * root/<db>.db/<table>/} directories holding a {@code schema/} directory) that {@code
     * pattern} names, sorted by name. The pattern is {@code db.table} where either part may be or
     * hold {@code *} ({@code "db.*"}, {@code "*.*"}), as Paimon's Java procedures take a table.
     * Reads directories on the calling thread; any thread may call it.
     *
     * @param root the warehouse: a local path or a {@code file://} URI
     * @param pattern the tables to list
     * @return {@code db.table} name to location (what {@link TableContext} takes as the table
     *     URI), in name order
     * @throws PaimonCleanupException NOT_FOUND when no table matches, INVALID_ARGUMENT for a
     *     pattern without {@code .}, UNSUPPORTED for an object-store URI, STORAGE when a
     *     directory cannot be listed, NULL_POINTER for a null argument
     */
    public static java.util.SortedMap<String, String> listTables(String root, String pattern) {
        byte[][] pairs = listTables0(encode(root, "the warehouse root"), encode(pattern, "the table pattern"));
        java.util.SortedMap<String, String> out = new java.util.TreeMap<String, String>();
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            out.put(decode(pairs[i]), decode(pairs[i + 1]));
        }
        return java.util.Collections.unmodifiableSortedMap(out);
    }

    /** UTF-8 bytes of a string for the glue; a NUL character is refused. */
    static byte[] encode(String s, String what) {
        if (s == null) {
            throw new PaimonCleanupException(PaimonCleanupException.NULL_POINTER, what + " is null");
        }
        if (s.indexOf('\0') >= 0) {
            throw new PaimonCleanupException(
                    PaimonCleanupException.INVALID_ARGUMENT, what + " contains a NUL character");
        }
        return s.getBytes(UTF8);
    }

    static String decode(byte[] b) {
        return b == null ? null : new String(b, UTF8);
    }

    // ---- natives (bindings/java/jni/paimon_cleanup_jni.c). Failing calls throw
    // PaimonCleanupException; handles are the native pointers as longs.

    static native byte[] version0();

    static native int abiVersion0();

    static native int glueAbiVersion0();

    static native byte[] statusName0(int status);

    static native long parseOlderThan0(byte[] text, long nowMs);

    static native byte[][] listTables0(byte[] root, byte[] pattern);

    static native long executorNew(int workerThreads);

    static native void executorSetIoConcurrency(long exec, int n);

    static native int executorWorkerThreads(long exec);

    static native int executorIoConcurrency(long exec);

    static native void executorFree(long exec);

    static native long contextNew(byte[] uri, byte[][] keys, byte[][] values);

    static native void contextFree(long ctx);

    static native long[] tableSummary(long ctx, long exec);

    /**
     * Returns the native handle of one operation call: its own cancellation token and the memory
     * bound in bytes (0: none). Passed to the operation as its {@code token}; freed by runFree.
     */
    static native long runNew(long maxMemory, LogListener log, int logLevel);

    static native void runCancel(long run);

    static native void runFree(long run);

    static native long expireConfigNew();

    static native void expireConfigSet(long cfg, int field, long value);

    static native void expireConfigFree(long cfg);

    static native long orphanConfigNew();

    static native void orphanConfigSet(long cfg, int field, long value);

    static native void orphanConfigFree(long cfg);

    static native long partitionExpireConfigNew();

    static native void partitionExpireConfigSet(long cfg, int field, long value);

    static native void partitionExpireConfigSetString(long cfg, int field, byte[] value);

    static native void partitionExpireConfigFree(long cfg);

    static native long expire(
            long ctx, long exec, long cfg, boolean changelogs, long token, ProgressListener p);

    static native long deleteTag(
            long ctx, long exec, byte[] tag, boolean dryRun, long token, ProgressListener p);

    static native long expireTags(
            long ctx, long exec, long olderThanMs, boolean dryRun, long token, ProgressListener p);

    static native long expireConsumers(
            long ctx, long exec, long expirationMs, boolean dryRun, long token, ProgressListener p);

    static native long maintain(long ctx, long exec, boolean dryRun, long token, ProgressListener p);

    static native long removeOrphanFiles(
            long ctx, long exec, long cfg, VetoListener veto, long token, ProgressListener p);

    /** [0] = the plan state, then the units. */
    static native byte[][] orphanUnitsPlan(long ctx, long exec, long cfg, long token, ProgressListener p);

    static native byte[] orphanUnitExecute(
            long exec, byte[] unit, byte[][] keys, byte[][] values, long token, ProgressListener p);

    static native byte[] orphanPartialsMerge(byte[] a, byte[] b);

    /** [0] = the decision, then the delete units. */
    static native byte[][] orphanUnitsDecide(long ctx, long exec, long cfg, VetoListener veto,
            byte[] state, byte[] merged, long token, ProgressListener p);

    /** [0] = the summary, then one piece per shard. */
    static native byte[][] orphanPartialSplit(byte[] partial, int shards);

    /** { the new state, the gate, { 1 if the shards decide, else 0 } }. */
    static native byte[][] orphanUnitsGate(long ctx, long exec, byte[] state, byte[] summary,
            int shards, long token, ProgressListener p);

    /** [0] = the shard's report, then its delete units. */
    static native byte[][] orphanShardDecide(long ctx, long exec, long cfg, VetoListener veto,
            byte[] gate, int shard, byte[] piece, long token, ProgressListener p);

    static native byte[] orphanUnitsConclude(byte[] state, byte[] summary, byte[][] reports);

    /** Returns a native report handle. */
    static native long orphanUnitsFinish(
            long ctx, long exec, byte[] decision, byte[] merged, long token, ProgressListener p);

    static native long dropPartitions(long ctx, long exec, byte[][][] keys, byte[][][] values,
            boolean preview, long token, ProgressListener p);

    static native long expirePartitions(long ctx, long exec, long cfg, long token, ProgressListener p);

    static native long reportLong(long report, int field);

    static native long reportFiles(long report, int fileClass);

    static native long reportBytes(long report, int fileClass);

    static native byte[][] reportStrings(long report, int which);

    static native int[] reportPathClasses(long report);

    static native byte[][] reportPartition(long report, int index);

    static native long[] reportCommitted(long report);

    static native long reportStep(long report, int index);

    static native byte[] reportJson(long report);

    static native byte[][] reportStringsRange(long report, int which, int from, int count);

    static native long reportJsonLength(long report);

    static native byte[] reportJsonRange(long report, long offset, int len);

    static native void reportFree(long report);

    /** [0] = the plan state, then the candidate units. */
    static native byte[][] expiryUnitsPlan(long ctx, long exec, long cfg, long token, ProgressListener p);

    static native byte[] expiryUnitExecute(
            long exec, byte[] unit, byte[][] keys, byte[][] values, long token, ProgressListener p);

    /** { the partial result, every path the unit deleted (each followed by a NUL byte) }. */
    static native byte[][] expiryUnitExecutePaths(
            long exec, byte[] unit, byte[][] keys, byte[][] values, long token, ProgressListener p);

    static native byte[] expiryPartialsMerge(byte[] a, byte[] b);

    /** [0] = the new plan state, then the protect units. */
    static native byte[][] expiryUnitsProtect(
            long ctx, long exec, byte[] state, byte[] candidates, long token, ProgressListener p);

    /** [0] = the decision, then the delete units. */
    static native byte[][] expiryUnitsDecide(long ctx, long exec, byte[] state, byte[] candidates,
            byte[] protectedKeys, long token, ProgressListener p);

    /** Returns a native report handle. */
    static native long expiryUnitsFinish(
            long ctx, long exec, byte[] decision, byte[] merged, long token, ProgressListener p);

    /** [0] = the summary, then one piece per shard. */
    static native byte[][] expiryPartialSplit(byte[] partial, int shards);

    /** { the decision so far, the gate }. */
    static native byte[][] expiryUnitsGate(long ctx, long exec, byte[] state, byte[] summary,
            int shards, boolean pathsToTasks, long token, ProgressListener p);

    /**
     * [0] = the shard's report, [1] = the paths it hands to the task (each followed by a NUL
     * byte), then its delete units.
     */
    static native byte[][] expiryShardDecide(long exec, byte[] gate, int shard, byte[] piece,
            byte[][] keys, byte[][] values, long token, ProgressListener p);

    static native byte[] expiryUnitsConclude(byte[] decision, byte[][] reports);

    /** Test hook: calls {@code p} from {@code threads} new native threads, {@code calls} times each. */
    static native void foreignThreadSelfTest(ProgressListener p, int threads, int calls);
}
