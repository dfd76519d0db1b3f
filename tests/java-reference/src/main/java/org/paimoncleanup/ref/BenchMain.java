package org.paimoncleanup.ref;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.operation.CleanOrphanFilesResult;
import org.apache.paimon.operation.LocalOrphanFilesClean;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.Options;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ScanMode;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.snapshot.SnapshotReader;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Java side of {@code scripts/bench-java.sh}: one Paimon Java operation on one table, in a
 * JVM of its own, timed from inside (no JVM start), one JSON line on standard output.
 *
 * <pre>
 * java -cp CP org.paimoncleanup.ref.BenchMain expire   TABLE THREADS [OLDER_THAN_MS]
 * java -cp CP org.paimoncleanup.ref.BenchMain orphans  TABLE THREADS [OLDER_THAN_MS]
 * java -cp CP org.paimoncleanup.ref.BenchMain orphans-list TABLE THREADS [OLDER_THAN_MS]
 * java -cp CP org.paimoncleanup.ref.BenchMain validate TABLE THREADS [STRIDE]
 * </pre>
 *
 * <p>{@code expire} runs {@code table.newExpireSnapshots()} keeping one snapshot (retain min 1,
 * max unbounded, no expiry limit, cut-off {@code OLDER_THAN_MS}, default now), as paimon-bench's
 * expiry; {@code orphans} runs {@code LocalOrphanFilesClean} with that cut-off; both with {@code
 * file-operation.thread-num} = THREADS. The deletes are counted per kind by the file IO (counts
 * only, so the count does not add to the heap being measured). {@code orphans-list} is its dry run, printing
 * each path it would delete ({@code ORPHAN path}, relative to the table). {@code validate} plans every
 * version (each snapshot, tag and branch snapshot, data and changelog) and prints per-version
 * file counts: it fails on the first version Java cannot plan. With STRIDE above 1 it plans every
 * STRIDE-th snapshot of each branch (and always the first and the latest), every tag.
 *
 * <p>TABLE may be an {@code s3://bucket/path} URI: the table is then opened through Paimon's S3
 * file IO ({@code paimon-s3}, Hadoop S3A inside), configured by the system properties {@code
 * -Dbench.option.KEY=VALUE} (for example {@code s3.endpoint}, {@code s3.access-key}, {@code
 * s3.secret-key}, {@code s3.path.style.access}), and wrapped in {@link CountingDelegateFileIO}.
 */
public final class BenchMain {

    private BenchMain() {}

    /** {@link LocalFileIO} counting the successful deletes per kind of file. */
    public static final class CountingFileIO extends LocalFileIO {
        private static final long serialVersionUID = 1L;
        private final transient Map<String, AtomicLong> deleted = new ConcurrentHashMap<>();

        @Override
        public boolean delete(Path path, boolean recursive) throws IOException {
            boolean ok = super.delete(path, recursive);
            if (ok) {
                deleted.computeIfAbsent(kind(path), k -> new AtomicLong()).incrementAndGet();
            }
            return ok;
        }

        Map<String, Long> counts() {
            Map<String, Long> out = new TreeMap<>();
            deleted.forEach((k, v) -> out.put(k, v.get()));
            return out;
        }
    }

    /** The kind of a table file by its directory and name. */
    static String kind(Path path) {
        String name = path.getName();
        String parent = path.getParent() == null ? "" : path.getParent().getName();
        if (parent.equals("snapshot")) {
            return name.startsWith("snapshot-") ? "snapshot" : "hint";
        }
        if (parent.equals("changelog")) {
            return "changelog metadata";
        }
        if (parent.equals("manifest")) {
            if (name.startsWith("manifest-list-")) {
                return "manifest list";
            }
            if (name.startsWith("index-manifest-")) {
                return "index manifest";
            }
            if (name.startsWith("manifest-")) {
                return "manifest";
            }
            return "manifest dir other";
        }
        if (parent.equals("index")) {
            return "index";
        }
        if (parent.equals("statistics")) {
            return "statistics";
        }
        if (name.startsWith("bucket-") || (name.contains("=") && !name.contains("."))) {
            return "directory";
        }
        if (name.startsWith("changelog-")) {
            return "changelog";
        }
        return "data";
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: BenchMain expire|orphans|validate TABLE THREADS [OLDER_THAN_MS]");
            System.exit(2);
        }
        String op = args[0];
        String dir = args[1];
        String threads = args[2];
        long olderThan =
                args.length > 3 && !op.equals("validate")
                        ? Long.parseLong(args[3])
                        : System.currentTimeMillis();
        int stride = op.equals("validate") && args.length > 3 ? Integer.parseInt(args[3]) : 1;
        long start = System.nanoTime();
        long cpuStart = processCpuNanos();
        boolean remote = dir.contains("://");
        CountingFileIO local = remote ? null : new CountingFileIO();
        CountingDelegateFileIO wrapped = null;
        Path tablePath;
        FileIO io;
        if (remote) {
            tablePath = new Path(dir);
            Options fsOptions = new Options();
            String prefix = "bench.option.";
            for (String key : System.getProperties().stringPropertyNames()) {
                if (key.startsWith(prefix)) {
                    fsOptions.set(key.substring(prefix.length()), System.getProperty(key));
                }
            }
            wrapped = new CountingDelegateFileIO(FileIO.get(tablePath, CatalogContext.create(fsOptions)));
            io = wrapped;
        } else {
            tablePath = new Path(new File(dir).toURI().toString());
            io = local;
        }
        Map<String, String> opts = new HashMap<>();
        opts.put("file-operation.thread-num", threads);
        FileStoreTable table = FileStoreTableFactory.create(io, tablePath).copy(opts);
        StringBuilder extra = new StringBuilder();
        switch (op) {
            case "expire":
                {
                    long now = System.currentTimeMillis();
                    ExpireConfig config =
                            ExpireConfig.builder()
                                    .snapshotRetainMin(1)
                                    .snapshotRetainMax(Integer.MAX_VALUE)
                                    .snapshotMaxDeletes(Integer.MAX_VALUE)
                                    .snapshotTimeRetain(Duration.ofMillis(Math.max(0, now - olderThan)))
                                    .build();
                    int expired = table.newExpireSnapshots().config(config).expire();
                    extra.append(",\"snapshots_expired\":").append(expired);
                    break;
                }
            case "orphans":
                {
                    CleanOrphanFilesResult r =
                            new LocalOrphanFilesClean(table, olderThan, false).clean();
                    extra.append(",\"deleted_reported\":").append(r.getDeletedFileCount());
                    break;
                }
            case "orphans-list":
                {
                    CleanOrphanFilesResult r =
                            new LocalOrphanFilesClean(table, olderThan, true).clean();
                    String root =
                            remote
                                    ? tablePath.toUri().getPath() + "/"
                                    : new File(dir).getAbsolutePath() + "/";
                    for (Path p : r.getDeletedFilesPath()) {
                        String full = p.toUri().getPath();
                        System.out.println(
                                "ORPHAN " + (full.startsWith(root) ? full.substring(root.length()) : full));
                    }
                    extra.append(",\"deleted_reported\":").append(r.getDeletedFileCount());
                    break;
                }
            case "validate":
                extra.append(",\"stride\":").append(stride);
                extra.append(",\"versions\":").append(validate(table, stride));
                break;
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
        double wallMs = (System.nanoTime() - start) / 1e6;
        double cpuMs = (processCpuNanos() - cpuStart) / 1e6;
        StringBuilder out = new StringBuilder("{\"op\":\"").append(op).append('"');
        out.append(",\"wall_ms\":").append(String.format("%.1f", wallMs));
        out.append(",\"cpu_ms\":").append(String.format("%.1f", cpuMs));
        out.append(",\"jvm_uptime_ms\":").append(ManagementFactory.getRuntimeMXBean().getUptime());
        out.append(",\"max_heap_mb\":").append(Runtime.getRuntime().maxMemory() >> 20);
        long total = 0;
        StringBuilder kinds = new StringBuilder();
        for (Map.Entry<String, Long> e :
                (remote ? wrapped.counts() : local.counts()).entrySet()) {
            if (kinds.length() > 0) {
                kinds.append(',');
            }
            kinds.append('"').append(e.getKey()).append("\":").append(e.getValue());
            if (!e.getKey().equals("directory")) {
                total += e.getValue();
            }
        }
        out.append(",\"deleted_files\":").append(total);
        out.append(",\"deleted\":{").append(kinds).append('}');
        out.append(extra).append('}');
        System.out.println("BENCH-JAVA " + out);
        System.out.flush();
        // Paimon's file-operation pools are not daemon threads everywhere.
        System.exit(0);
    }

    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return 0;
    }

    /**
     * Plans every version: each snapshot of main and of each branch, each tag; data files and
     * changelog files. Returns a JSON object: per branch, versions planned, total data and
     * changelog files over them, the latest's data files.
     */
    private static String validate(FileStoreTable table, int stride) throws Exception {
        StringBuilder out = new StringBuilder("{");
        List<String> branches = new ArrayList<>();
        branches.add("main");
        branches.addAll(table.branchManager().branches());
        boolean first = true;
        for (String b : branches) {
            FileStoreTable t = b.equals("main") ? table : table.switchToBranch(b);
            long versions = 0;
            long data = 0;
            long changelog = 0;
            long latestData = -1;
            Iterator<Snapshot> it = t.snapshotManager().snapshots();
            Snapshot last = null;
            long seen = 0;
            while (it.hasNext()) {
                Snapshot s = it.next();
                boolean pick = seen++ % stride == 0 || !it.hasNext();
                if (!pick) {
                    continue;
                }
                data += count(t, s, ScanMode.ALL);
                if (s.changelogManifestList() != null) {
                    changelog += count(t, s, ScanMode.CHANGELOG);
                }
                versions++;
                last = s;
            }
            if (last != null) {
                latestData = count(t, last, ScanMode.ALL);
            }
            long tags = 0;
            long tagData = 0;
            for (Snapshot s : t.tagManager().tags().keySet()) {
                tagData += count(t, s, ScanMode.ALL);
                tags++;
            }
            if (!first) {
                out.append(',');
            }
            first = false;
            out.append('"').append(b).append("\":{\"snapshots\":").append(versions);
            out.append(",\"data_files\":").append(data);
            out.append(",\"changelog_files\":").append(changelog);
            out.append(",\"latest_data_files\":").append(latestData);
            out.append(",\"tags\":").append(tags);
            out.append(",\"tag_data_files\":").append(tagData).append('}');
        }
        return out.append('}').toString();
    }

    private static long count(FileStoreTable t, Snapshot s, ScanMode mode) {
        SnapshotReader r = t.newSnapshotReader().withSnapshot(s).withMode(mode);
        long n = 0;
        for (Split split : r.read().splits()) {
            if (split instanceof DataSplit) {
                n += ((DataSplit) split).dataFiles().size();
            }
        }
        return n;
    }
}
