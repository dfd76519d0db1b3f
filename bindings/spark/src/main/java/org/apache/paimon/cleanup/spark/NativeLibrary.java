package org.apache.paimon.cleanup.spark;

import java.io.File;

import org.apache.paimon.cleanup.PaimonCleanup;
import org.apache.spark.SparkFiles;

/**
 * Finds the JNI library ({@code libpaimon_cleanup_jni.so}, which links the Rust library
 * statically, so it is the only native file) on the driver and on every executor, before the first
 * use of the binding.
 *
 * <p>The binding loads the file named by the system property {@value PaimonCleanup#LIBRARY_PROPERTY}
 * or else {@code paimon_cleanup_jni} from {@code java.library.path}. When the property is not set,
 * this class sets it to the first of:
 *
 * <ol>
 *   <li>the file shipped with {@code spark-submit --files .../libpaimon_cleanup_jni.so}, as
 *       {@link SparkFiles#get} finds it (local, standalone, Kubernetes);
 *   <li>the same name in the working directory (YARN puts {@code --files} there).
 * </ol>
 *
 * Otherwise {@code java.library.path} is used (e.g. {@code spark.executor.extraLibraryPath} or a
 * container image with the library installed).
 */
final class NativeLibrary {
    private static boolean prepared;

    private NativeLibrary() {}

    /** The file name of the JNI library on this platform. */
    static String fileName() {
        return System.mapLibraryName("paimon_cleanup_jni");
    }

    /** Points the binding at the shipped library, once per JVM. Thread-safe. */
    static synchronized void prepare() {
        if (prepared) {
            return;
        }
        prepared = true;
        String set = System.getProperty(PaimonCleanup.LIBRARY_PROPERTY);
        if (set != null && !set.isEmpty()) {
            return;
        }
        String name = fileName();
        File shipped = null;
        try {
            shipped = new File(SparkFiles.get(name));
        } catch (RuntimeException e) {
            // No SparkEnv in this JVM (not inside a Spark application): java.library.path.
        }
        if (shipped == null || !shipped.isFile()) {
            shipped = new File(name).getAbsoluteFile();
        }
        if (shipped.isFile()) {
            System.setProperty(PaimonCleanup.LIBRARY_PROPERTY, shipped.getAbsolutePath());
        }
    }

    /** @return where the library was loaded from, for the log */
    static String describe() {
        String set = System.getProperty(PaimonCleanup.LIBRARY_PROPERTY);
        return set != null && !set.isEmpty()
                ? set
                : fileName() + " from java.library.path=" + System.getProperty("java.library.path");
    }
}
