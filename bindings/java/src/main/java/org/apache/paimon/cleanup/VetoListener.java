package org.apache.paimon.cleanup;

/**
 * Asked by an orphan-file removal about every file it would delete; returning true keeps the file.
 * Same thread rules as {@link ProgressListener}. An exception keeps the file, stops the run and is
 * rethrown by {@link TableContext#removeOrphanFiles}.
 */
public interface VetoListener {
    /**
     * @param path the file, relative to the table root when under it, else its full URI
     * @return true to keep the file
     */
    boolean keep(String path);
}
