package org.apache.paimon.cleanup;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.InflaterInputStream;

/**
 * The outcome of an operation, copied out of the library's report (the native report is freed
 * before the operation returns, so a Report holds no native resources). Fields that do not apply
 * to {@link #kind()} are 0 / false / empty. Immutable.
 *
 * <p>The counts are copied as plain fields; the path listing and the JSON document, which grow
 * with the files a run deleted, are kept compressed and decoded only when {@link #paths()},
 * {@link #forEachPath} or {@link #json()} is called, so that a host can take the counts of a
 * report of millions of files without holding its paths as Java strings.
 */
public final class Report {
    /** A file the run deleted (in a dry run: would delete). */
    public static final class DeletedPath {
        private final String path;
        private final FileClass fileClass;

        DeletedPath(String path, FileClass fileClass) {
            this.path = path;
            this.fileClass = fileClass;
        }

        /** @return the path, relative to the table root when under it, else the full URI */
        public String path() {
            return path;
        }

        /** @return the file's class */
        public FileClass fileClass() {
            return fileClass;
        }
    }

    /** A deletion that failed (the file is still there; a later run retries it). */
    public static final class FailedDeletion {
        private final String path;
        private final String error;

        FailedDeletion(String path, String error) {
            this.path = path;
            this.error = error;
        }

        /** @return the file */
        public String path() {
            return path;
        }

        /** @return why it could not be deleted */
        public String error() {
            return error;
        }
    }

    // Scalar fields read through PaimonCleanup.reportLong (ids shared with the JNI glue).
    static final int F_KIND = 0;
    static final int F_DRY_RUN = 1;
    static final int F_EXPIRED = 2;
    static final int F_HAS_RANGE = 3;
    static final int F_FIRST = 4;
    static final int F_LAST = 5;
    static final int F_HAS_EARLIEST = 6;
    static final int F_EARLIEST = 7;
    static final int F_CHANGELOGS_WRITTEN = 8;
    static final int F_TOTAL_FILES = 9;
    static final int F_TOTAL_BYTES = 10;
    static final int F_DIRS_REMOVED = 11;
    static final int F_MARKED_FILES = 12;
    static final int F_MARKED_ROWS = 13;
    static final int F_MARKED_BYTES = 14;
    static final int F_CUTOFF = 15;
    static final int F_CANDIDATES = 16;
    static final int F_REFERENCED = 17;
    static final int F_VETOED = 18;
    static final int F_ELAPSED = 19;
    static final int F_STEP_COUNT = 20;
    static final int F_COMMITTED_COUNT = 21;
    static final int F_NAME_COUNT = 22;
    static final int F_PATHS_ELSEWHERE = 23;
    // String lists read through PaimonCleanup.reportStrings.
    static final int S_PATHS = 0;
    static final int S_FAILED_PATHS = 1;
    static final int S_FAILED_ERRORS = 2;
    static final int S_NAMES = 3;
    static final int S_MISSING = 4;
    static final int S_WARNINGS = 5;

    private final ReportKind kind;
    private final boolean dryRun;
    private final long expired;
    private final long firstExpired;
    private final long lastExpired;
    private final boolean hasRange;
    private final Long earliestAfter;
    private final long changelogsWritten;
    private final Map<FileClass, long[]> classes;
    private final long totalFiles;
    private final long totalBytes;
    private final long dirsRemoved;
    private final int pathCount;
    private final boolean pathsElsewhere;
    private final byte[] pathClassCodes;
    private final byte[] pathsDeflated;
    private final List<FailedDeletion> failures;
    private final List<String> names;
    private final List<String> missing;
    private final List<List<String[]>> partitions;
    private final long markedFiles;
    private final long markedRows;
    private final long markedBytes;
    private final List<Long> committed;
    private final long cutoffMs;
    private final long candidates;
    private final long referenced;
    private final long vetoed;
    private final List<String> warnings;
    private final List<Report> steps;
    private final long elapsedMs;
    private final byte[] jsonDeflated;

    /** Buffer size of the compressed streams. */
    private static final int SLICE = 1 << 16;

    /**
     * Paths (entries) and JSON bytes are copied out of the native report in slices of this size;
     * the tests lower it so that small reports cross slice boundaries.
     */
    static volatile int copySlice = 1 << 16;

    /** Copies everything out of native report {@code h} (borrowed; the caller frees it). */
    Report(long h) {
        kind = ReportKind.of((int) PaimonCleanup.reportLong(h, F_KIND));
        dryRun = PaimonCleanup.reportLong(h, F_DRY_RUN) != 0;
        expired = PaimonCleanup.reportLong(h, F_EXPIRED);
        hasRange = PaimonCleanup.reportLong(h, F_HAS_RANGE) != 0;
        firstExpired = PaimonCleanup.reportLong(h, F_FIRST);
        lastExpired = PaimonCleanup.reportLong(h, F_LAST);
        earliestAfter = PaimonCleanup.reportLong(h, F_HAS_EARLIEST) != 0
                ? Long.valueOf(PaimonCleanup.reportLong(h, F_EARLIEST))
                : null;
        changelogsWritten = PaimonCleanup.reportLong(h, F_CHANGELOGS_WRITTEN);
        Map<FileClass, long[]> c = new EnumMap<FileClass, long[]>(FileClass.class);
        for (FileClass fc : FileClass.values()) {
            long files = PaimonCleanup.reportFiles(h, fc.code());
            if (files != 0) {
                c.put(fc, new long[] {files, PaimonCleanup.reportBytes(h, fc.code())});
            }
        }
        classes = Collections.unmodifiableMap(c);
        totalFiles = PaimonCleanup.reportLong(h, F_TOTAL_FILES);
        totalBytes = PaimonCleanup.reportLong(h, F_TOTAL_BYTES);
        dirsRemoved = PaimonCleanup.reportLong(h, F_DIRS_REMOVED);
        int[] pathClasses = PaimonCleanup.reportPathClasses(h);
        pathCount = pathClasses.length;
        pathsElsewhere = PaimonCleanup.reportLong(h, F_PATHS_ELSEWHERE) != 0;
        pathClassCodes = new byte[pathCount];
        for (int i = 0; i < pathCount; i++) {
            pathClassCodes[i] = (byte) pathClasses[i];
        }
        pathsDeflated = deflatePaths(h, pathCount);
        List<String> fp = strings(h, S_FAILED_PATHS);
        List<String> fe = strings(h, S_FAILED_ERRORS);
        List<FailedDeletion> fd = new ArrayList<FailedDeletion>(fp.size());
        for (int i = 0; i < fp.size(); i++) {
            fd.add(new FailedDeletion(fp.get(i), fe.get(i)));
        }
        failures = Collections.unmodifiableList(fd);
        names = strings(h, S_NAMES);
        missing = strings(h, S_MISSING);
        warnings = strings(h, S_WARNINGS);
        List<List<String[]>> parts = new ArrayList<List<String[]>>();
        int nameCount = (int) PaimonCleanup.reportLong(h, F_NAME_COUNT);
        for (int i = 0; i < nameCount; i++) {
            byte[][] kv = PaimonCleanup.reportPartition(h, i);
            if (kv.length == 0) {
                continue;
            }
            List<String[]> fields = new ArrayList<String[]>();
            for (int f = 0; f + 1 < kv.length; f += 2) {
                fields.add(new String[] {PaimonCleanup.decode(kv[f]), PaimonCleanup.decode(kv[f + 1])});
            }
            parts.add(Collections.unmodifiableList(fields));
        }
        partitions = Collections.unmodifiableList(parts);
        markedFiles = PaimonCleanup.reportLong(h, F_MARKED_FILES);
        markedRows = PaimonCleanup.reportLong(h, F_MARKED_ROWS);
        markedBytes = PaimonCleanup.reportLong(h, F_MARKED_BYTES);
        long[] ids = PaimonCleanup.reportCommitted(h);
        List<Long> cl = new ArrayList<Long>(ids.length);
        for (long id : ids) {
            cl.add(Long.valueOf(id));
        }
        committed = Collections.unmodifiableList(cl);
        cutoffMs = PaimonCleanup.reportLong(h, F_CUTOFF);
        candidates = PaimonCleanup.reportLong(h, F_CANDIDATES);
        referenced = PaimonCleanup.reportLong(h, F_REFERENCED);
        vetoed = PaimonCleanup.reportLong(h, F_VETOED);
        elapsedMs = PaimonCleanup.reportLong(h, F_ELAPSED);
        jsonDeflated = deflateJson(h);
        int stepCount = (int) PaimonCleanup.reportLong(h, F_STEP_COUNT);
        List<Report> st = new ArrayList<Report>(stepCount);
        for (int i = 0; i < stepCount; i++) {
            st.add(new Report(PaimonCleanup.reportStep(h, i))); // borrowed from h
        }
        steps = Collections.unmodifiableList(st);
    }

    /** The report's paths, each as its length and UTF-8 bytes, compressed a slice at a time. */
    private static byte[] deflatePaths(final long h, final int count) {
        if (count == 0) {
            return new byte[0];
        }
        return deflate(out -> {
            DataOutputStream data = new DataOutputStream(out);
            int step = Math.max(1, copySlice);
            for (int from = 0; from < count; from += step) {
                for (byte[] b : PaimonCleanup.reportStringsRange(h, S_PATHS, from, step)) {
                    data.writeInt(b.length);
                    data.write(b);
                }
            }
            data.flush();
        });
    }

    /** The report's JSON document, compressed a slice at a time. */
    private static byte[] deflateJson(final long h) {
        final long length = PaimonCleanup.reportJsonLength(h);
        return deflate(out -> {
            int step = Math.max(1, copySlice);
            long offset = 0;
            while (offset < length) {
                byte[] slice = PaimonCleanup.reportJsonRange(h, offset, (int) Math.min(step, length - offset));
                if (slice.length == 0) {
                    break;
                }
                out.write(slice);
                offset += slice.length;
            }
        });
    }

    /** What {@link #deflate} compresses: written to the compressing stream. */
    private interface Body {
        void writeTo(OutputStream out) throws IOException;
    }

    /** {@code body}'s bytes, compressed (fast level) into memory. */
    private static byte[] deflate(Body body) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Deflater deflater = new Deflater(Deflater.BEST_SPEED);
        try (OutputStream out = new DeflaterOutputStream(buf, deflater, SLICE)) {
            body.writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        } finally {
            deflater.end();
        }
        return buf.toByteArray();
    }

    /** A stream of the bytes {@link #deflate} compressed; closing it frees its inflater. */
    private static InputStream inflate(byte[] deflated) {
        return new BufferedInputStream(new InflaterInputStream(new ByteArrayInputStream(deflated)), SLICE);
    }

    private static List<String> strings(long h, int which) {
        byte[][] raw = PaimonCleanup.reportStrings(h, which);
        List<String> out = new ArrayList<String>(raw.length);
        for (byte[] b : raw) {
            out.add(PaimonCleanup.decode(b));
        }
        return Collections.unmodifiableList(out);
    }

    /** @return which operation produced the report */
    public ReportKind kind() {
        return kind;
    }

    /** @return true when nothing was changed and the report says what a real run would do */
    public boolean dryRun() {
        return dryRun;
    }

    /** @return snapshots, changelogs, tags, consumers or partitions removed */
    public long expiredCount() {
        return expired;
    }

    /** @return true when {@link #firstExpiredId()} / {@link #lastExpiredId()} are meaningful */
    public boolean hasExpiredRange() {
        return hasRange;
    }

    /** @return first expired snapshot / changelog id (0 without a range) */
    public long firstExpiredId() {
        return firstExpired;
    }

    /** @return last expired snapshot / changelog id (0 without a range) */
    public long lastExpiredId() {
        return lastExpired;
    }

    /** @return earliest snapshot left by a snapshot expiry, or null */
    public Long earliestAfter() {
        return earliestAfter;
    }

    /** @return long-lived changelog files written by a snapshot expiry */
    public long changelogsWritten() {
        return changelogsWritten;
    }

    /**
     * @param c a file class
     * @return files of that class deleted (dry run: deletable)
     */
    public long files(FileClass c) {
        long[] v = classes.get(c);
        return v == null ? 0 : v[0];
    }

    /**
     * @param c a file class
     * @return bytes of that class deleted (dry run: deletable)
     */
    public long bytes(FileClass c) {
        long[] v = classes.get(c);
        return v == null ? 0 : v[1];
    }

    /** @return the classes with at least one file, in class order */
    public List<FileClass> classes() {
        return Collections.unmodifiableList(new ArrayList<FileClass>(classes.keySet()));
    }

    /** @return files deleted over all classes */
    public long totalFiles() {
        return totalFiles;
    }

    /** @return bytes deleted over all classes */
    public long totalBytes() {
        return totalBytes;
    }

    /** @return directories removed because they were left empty */
    public long dirsRemoved() {
        return dirsRemoved;
    }

    /**
     * @return every file deleted (dry run: deletable), in deletion order; decoded on each call
     *     (use {@link #pathCount()} for the number, {@link #forEachPath} to stream them)
     */
    public List<DeletedPath> paths() {
        final List<DeletedPath> all = new ArrayList<DeletedPath>(pathCount);
        forEachPath(new Consumer<DeletedPath>() {
            @Override
            public void accept(DeletedPath p) {
                all.add(p);
            }
        });
        return Collections.unmodifiableList(all);
    }

    /** @return the number of entries of {@link #paths()}, without decoding them */
    public int pathCount() {
        return pathCount;
    }

    /**
     * @return true when {@link #paths()} is a sample, not every file: a snapshot expiry as units
     *     whose gate handed the freed data and changelog paths to the tasks (each task returned
     *     its own); the counts and {@link #failures()} stay complete
     */
    public boolean pathsElsewhere() {
        return pathsElsewhere;
    }

    /**
     * Hands every entry of {@link #paths()} to {@code consumer}, in deletion order, decoding one
     * at a time: the listing is never held whole as Java objects.
     *
     * @param consumer receives each deleted (dry run: deletable) file
     */
    public void forEachPath(Consumer<? super DeletedPath> consumer) {
        if (pathCount == 0) {
            return;
        }
        try (DataInputStream in = new DataInputStream(inflate(pathsDeflated))) {
            for (int i = 0; i < pathCount; i++) {
                byte[] b = new byte[in.readInt()];
                in.readFully(b);
                consumer.accept(new DeletedPath(PaimonCleanup.decode(b), FileClass.of(pathClassCodes[i])));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the report's compressed path listing is damaged", e);
        }
    }

    /** @return deletions that failed */
    public List<FailedDeletion> failures() {
        return failures;
    }

    /** @return tags deleted, consumer ids expired or partitions dropped ({@code k=v/k2=v2}) */
    public List<String> names() {
        return names;
    }

    /** @return requested items that did not exist */
    public List<String> missing() {
        return missing;
    }

    /**
     * @return dropped partitions, each a list of {key, value} pairs; a value is the text that
     *     names it again in a spec (the default partition name for NULL, strings verbatim)
     */
    public List<List<String[]>> partitions() {
        return partitions;
    }

    /** @return data files a partition drop / expiry marked deleted */
    public long filesMarkedDeleted() {
        return markedFiles;
    }

    /** @return rows of those files */
    public long rowsMarkedDeleted() {
        return markedRows;
    }

    /** @return bytes of those files */
    public long bytesMarkedDeleted() {
        return markedBytes;
    }

    /** @return snapshots the run committed, in commit order */
    public List<Long> committedSnapshotIds() {
        return committed;
    }

    /** @return cut-off of an orphan-file removal (epoch ms; 0 for other kinds) */
    public long cutoffMs() {
        return cutoffMs;
    }

    /** @return files an orphan-file removal examined */
    public long candidates() {
        return candidates;
    }

    /** @return listed files kept because a version references them (whatever their age) */
    public long referenced() {
        return referenced;
    }

    /** @return candidates kept by the veto */
    public long vetoed() {
        return vetoed;
    }

    /** @return what the run deliberately left alone, and why */
    public List<String> warnings() {
        return warnings;
    }

    /** @return one report per step of a maintain run */
    public List<Report> steps() {
        return steps;
    }

    /** @return wall time of the run in milliseconds */
    public long elapsedMs() {
        return elapsedMs;
    }

    /**
     * @return the whole report as one JSON object: the document the CLI prints with {@code --json}
     *     for the same operation (every field, also those without an accessor here); decoded
     *     on each call
     */
    public String json() {
        if (jsonDeflated.length == 0) {
            return "";
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[SLICE];
        try (InputStream in = inflate(jsonDeflated)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the report's compressed JSON document is damaged", e);
        }
        return PaimonCleanup.decode(out.toByteArray());
    }

    @Override
    public String toString() {
        return kind.label() + (dryRun ? " (dry run)" : "") + ": " + totalFiles + " files / "
                + totalBytes + " bytes";
    }
}
