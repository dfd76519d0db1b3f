package org.apache.paimon.cleanup.flink;

import java.io.File;

import org.apache.flink.api.common.cache.DistributedCache;
import org.apache.paimon.cleanup.PaimonCleanup;

/**
 * Finds the JNI library ({@code libpaimon_cleanup_jni.so}, which links the Rust library
 * statically, so it is the only native file) in the client or job manager JVM that runs a job's
 * {@code main} and in every task manager JVM, before the first use of the binding.
 *
 * <p>The binding loads the file named by the system property {@value PaimonCleanup#LIBRARY_PROPERTY}
 * or else {@code paimon_cleanup_jni} from {@code java.library.path}. When the property is not set,
 * this class sets it to the first of:
 *
 * <ol>
 *   <li>the job's {@code --native-library FILE} (in {@code main}); the job registers the same
 *       file in Flink's distributed cache, so every task gets a copy (Flink's counterpart of
 *       Spark's {@code --files});
 *   <li>in a task, that copy from {@link DistributedCache#getFile};
 *   <li>the same name in the working directory (YARN's {@code yarn.ship-files} land there).
 * </ol>
 *
 * Otherwise {@code java.library.path} is used (e.g. an image with the library installed and
 * {@code env.java.opts.all: -Djava.library.path=...}).
 */
final class NativeLibrary {
    private static boolean prepared;

    private NativeLibrary() {}

    /** The file name of the JNI library on this platform (also its distributed-cache name). */
    static String fileName() {
        return System.mapLibraryName("paimon_cleanup_jni");
    }

    /**
     * In the JVM that runs {@code main}: uses {@code explicit} (the job's {@code --native-library},
     * may be null) unless the property is set already.
     *
     * @throws IllegalArgumentException when {@code explicit} names no file
     */
    static synchronized void prepareMain(String explicit) {
        if (explicit != null) {
            File f = new File(explicit).getAbsoluteFile();
            if (!f.isFile()) {
                throw new IllegalArgumentException("--native-library " + explicit + " is not a file");
            }
            String set = System.getProperty(PaimonCleanup.LIBRARY_PROPERTY);
            if (set == null || set.isEmpty()) {
                System.setProperty(PaimonCleanup.LIBRARY_PROPERTY, f.getPath());
            }
        }
        prepare(null);
    }

    /**
     * Points the binding at the shipped library, once per JVM. Thread-safe.
     *
     * @param cache the task's distributed cache, or null outside a task
     */
    static synchronized void prepare(DistributedCache cache) {
        if (prepared) {
            return;
        }
        String set = System.getProperty(PaimonCleanup.LIBRARY_PROPERTY);
        if (set != null && !set.isEmpty()) {
            prepared = true;
            return;
        }
        String name = fileName();
        File shipped = null;
        if (cache != null) {
            try {
                shipped = cache.getFile(name);
            } catch (IllegalArgumentException e) {
                // The job registered no such file: the working directory or java.library.path.
            }
        }
        if (shipped == null || !shipped.isFile()) {
            shipped = new File(name).getAbsoluteFile();
        }
        if (shipped.isFile()) {
            System.setProperty(PaimonCleanup.LIBRARY_PROPERTY, shipped.getAbsolutePath());
        }
        prepared = true;
    }

    /** @return where the library is loaded from, for the log */
    static String describe() {
        String set = System.getProperty(PaimonCleanup.LIBRARY_PROPERTY);
        return set != null && !set.isEmpty()
                ? set
                : fileName() + " from java.library.path=" + System.getProperty("java.library.path");
    }
}
