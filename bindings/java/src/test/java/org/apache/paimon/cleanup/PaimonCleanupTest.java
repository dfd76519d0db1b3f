package org.apache.paimon.cleanup;

import java.io.File;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Tests of the Java binding, run by ctest (bindings/java/CMakeLists.txt): a plain main with
 * checks, Java 8 source level.
 *
 * <pre>java -Djava.library.path=DIR -cp CLASSES org.apache.paimon.cleanup.PaimonCleanupTest</pre>
 *
 * Fixtures: $PAIMON_FIXTURES; without them the fixture part is skipped (exit 77) unless
 * PAIMON_REQUIRE_FIXTURES=1.
 */
public final class PaimonCleanupTest {
    private static int checks;
    private static int failures;

    private PaimonCleanupTest() {}

    private static void check(boolean ok, String what) {
        checks++;
        if (!ok) {
            failures++;
            System.err.println("FAIL: " + what);
        }
    }

    private interface Body {
        void run() throws Exception;
    }

    /** Runs body, which must throw PaimonCleanupException with status. */
    private static void expectStatus(int status, String what, Body body) {
        checks++;
        try {
            body.run();
            failures++;
            System.err.println("FAIL: " + what + ": no exception, expected " + PaimonCleanup.statusName(status));
        } catch (PaimonCleanupException e) {
            if (e.status() != status || e.detail().isEmpty()
                    || !e.getMessage().startsWith(PaimonCleanup.statusName(status) + ": ")) {
                failures++;
                System.err.println("FAIL: " + what + ": got " + e.getMessage());
            } else {
                System.out.println("  " + what + " -> " + e.getMessage());
            }
        } catch (Exception e) {
            failures++;
            System.err.println("FAIL: " + what + ": unexpected " + e);
        }
    }

    private static Path copyTable(Path fixtures, String rel, Path tmp, String name) throws IOException {
        final Path src = fixtures.resolve(rel);
        final Path dst = tmp.resolve(name);
        Files.walkFileTree(src, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Files.createDirectories(dst.resolve(src.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.copy(file, dst.resolve(src.relativize(file).toString()));
                return FileVisitResult.CONTINUE;
            }
        });
        return dst;
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static void plant(Path table, String rel, int size) throws IOException {
        Path p = table.resolve(rel);
        Files.write(p, new byte[size]);
        Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - 72L * 3600 * 1000));
    }

    /** Every file under root: relative path and size, sorted. */
    private static List<String> tree(final Path root) throws IOException {
        final List<String> out = new ArrayList<String>();
        Files.walkFileTree(root, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                out.add(root.relativize(file) + " " + attrs.size());
                return FileVisitResult.CONTINUE;
            }
        });
        Collections.sort(out);
        return out;
    }

    /** The memory bound: past it the run fails with INVALID_ARGUMENT and deletes nothing; an
     *  ample bound deletes what an unbounded run deletes. */
    private static void testMaxMemory(Path fixtures, Path tmp) throws Exception {
        final String rel = "parquet/pk_09.db/pk_09";
        System.out.println("max memory " + rel);
        final Executor exec = new Executor(2);
        try {
            Path m = copyTable(fixtures, rel, tmp, "max-memory");
            final TableContext ctx = new TableContext(m.toString());
            try {
                List<String> before = tree(m);
                check(new RunOptions().maxMemory(1).maxMemory() == 1, "maxMemory kept");
                expectStatus(PaimonCleanupException.MEMORY_LIMIT, "expiry past a 1-byte bound", new Body() {
                    @Override
                    public void run() {
                        ctx.expireSnapshots(exec, expireAll(false), new RunOptions().maxMemory(1));
                    }
                });
                checks++;
                try {
                    ctx.expireSnapshots(exec, expireAll(false), new RunOptions().maxMemory(512));
                    failures++;
                    System.err.println("FAIL: a 512-byte bound did not stop the run");
                } catch (PaimonCleanupException e) {
                    check(e.status() == PaimonCleanupException.MEMORY_LIMIT
                            && e.statusName().equals("memory_limit")
                            && e.detail().contains("max_memory"), "bound named: " + e.getMessage());
                }
                check(tree(m).equals(before), "a run stopped by its bound deleted nothing");
                checks++;
                try {
                    new RunOptions().maxMemory(-1);
                    failures++;
                    System.err.println("FAIL: a negative bound was accepted");
                } catch (IllegalArgumentException e) {
                    System.out.println("  negative bound -> " + e.getMessage());
                }
                Report r = ctx.expireSnapshots(exec, expireAll(false), new RunOptions().maxMemory(256L << 20));
                check(r.expiredCount() == 7 && r.totalFiles() > 0, "ample bound " + r);
                check(!tree(m).equals(before) && ctx.summary(exec).snapshotCount() == 1, "ample bound expired");
            } finally {
                ctx.close();
            }
        } finally {
            exec.close();
        }
    }

    /** The log listener: INFO events of the run only; a bad level fails; an exception stops it. */
    private static void testLog(Path fixtures, Path tmp) throws Exception {
        final String rel = "parquet/pk_09.db/pk_09";
        System.out.println("log " + rel);
        final Executor exec = new Executor(2);
        try {
            final TableContext ctx = new TableContext(copyTable(fixtures, rel, tmp, "log").toString());
            try {
                final List<String> lines = Collections.synchronizedList(new ArrayList<String>());
                final AtomicInteger verbose = new AtomicInteger();
                Report r = ctx.expireSnapshots(exec, expireAll(true), new RunOptions().log(new LogListener() {
                    @Override
                    public void onLog(int level, String target, String message) {
                        if (level == LogListener.INFO && target.startsWith("paimon_cleanup")) {
                            lines.add(message);
                        } else if (level > LogListener.INFO) {
                            verbose.incrementAndGet();
                        }
                    }
                }, LogListener.INFO));
                check(r.dryRun() && !lines.isEmpty() && verbose.get() == 0,
                        "log: " + lines.size() + " info lines, " + verbose.get() + " more verbose");
                System.out.println("  log: " + lines.size() + " info lines, e.g. " + lines.get(0));
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "log level 9", new Body() {
                    @Override
                    public void run() {
                        ctx.expireSnapshots(exec, expireAll(true), new RunOptions().log(new LogListener() {
                            @Override
                            public void onLog(int level, String target, String message) {}
                        }, 9));
                    }
                });
                checks++;
                try {
                    ctx.expireSnapshots(exec, expireAll(true), new RunOptions().log(new LogListener() {
                        @Override
                        public void onLog(int level, String target, String message) {
                            throw new IllegalStateException("log sink failed");
                        }
                    }, LogListener.INFO));
                    failures++;
                    System.err.println("FAIL: the log listener's exception was not rethrown");
                } catch (IllegalStateException e) {
                    System.out.println("  log listener exception rethrown");
                }
            } finally {
                ctx.close();
            }
        } finally {
            exec.close();
        }
    }

    private static ExpireConfig expireAll(boolean dryRun) {
        return new ExpireConfig().retainMin(1).olderThanMs(System.currentTimeMillis()).maxExpires(1000)
                .dryRun(dryRun);
    }

    private static void testBasics(final Path tmp) {
        System.out.println("basics");
        check(!PaimonCleanup.version().isEmpty(), "version");
        check(PaimonCleanup.statusName(PaimonCleanupException.NOT_FOUND).equals("not_found"), "status name");
        final long now = 1700000000000L;
        check(PaimonCleanup.parseOlderThan("1 d", now) == now - 86400000L, "older_than 1 d");
        check(PaimonCleanup.parseOlderThan("2023-11-01 00:00:00Z", now) == 1698796800000L,
                "older_than timestamp");
        for (final String bad : new String[] {"", "12345", "yesterday", "2023-13-01 00:00:00",
                "2030-01-01 00:00:00Z"}) {
            expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "older_than '" + bad + "'", new Body() {
                @Override
                public void run() {
                    PaimonCleanup.parseOlderThan(bad, now);
                }
            });
        }
        expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "too many workers", new Body() {
            @Override
            public void run() {
                new Executor(100000).close();
            }
        });
        final Executor exec = new Executor(2);
        try {
            check(exec.workerThreads() == 2, "worker threads");
            exec.setIoConcurrency(16);
            check(exec.ioConcurrency() == 16, "io concurrency");
            expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "io concurrency out of range", new Body() {
                @Override
                public void run() {
                    exec.setIoConcurrency(1 << 30);
                }
            });
            expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "empty uri", new Body() {
                @Override
                public void run() {
                    new TableContext("").close();
                }
            });
            expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "NUL in uri", new Body() {
                @Override
                public void run() {
                    new TableContext("/tmp/a\0b").close();
                }
            });
            expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "empty option key", new Body() {
                @Override
                public void run() {
                    new TableContext("/tmp/t", Collections.singletonMap("", "v")).close();
                }
            });
            final TableContext missing = new TableContext(tmp.resolve("no-such-table").toString());
            try {
                expectStatus(PaimonCleanupException.NOT_FOUND, "missing table summary", new Body() {
                    @Override
                    public void run() {
                        missing.summary(exec);
                    }
                });
                expectStatus(PaimonCleanupException.NOT_FOUND, "missing table expire", new Body() {
                    @Override
                    public void run() {
                        missing.expireSnapshots(exec, expireAll(false), null);
                    }
                });
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "retain min 0", new Body() {
                    @Override
                    public void run() {
                        missing.expireSnapshots(exec, new ExpireConfig().retainMin(0), null);
                    }
                });
                final CancelToken token = new CancelToken();
                token.cancel();
                check(token.isCancelled(), "token cancelled");
                expectStatus(PaimonCleanupException.CANCELLED, "cancelled before the run", new Body() {
                    @Override
                    public void run() {
                        missing.expireSnapshots(exec, expireAll(true), new RunOptions().cancelToken(token));
                    }
                });
            } finally {
                missing.close();
            }
            final TableContext closed = new TableContext("/tmp/t");
            closed.close();
            closed.close();
            expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "closed context", new Body() {
                @Override
                public void run() {
                    closed.summary(exec);
                }
            });
        } finally {
            exec.close();
            exec.close();
        }
    }

    /** Listener calls from native threads the JVM never saw (as from the executor's workers). */
    private static void testForeignThreads() throws InterruptedException {
        System.out.println("foreign threads");
        final List<String> names = Collections.synchronizedList(new ArrayList<String>());
        PaimonCleanup.foreignThreadSelfTest(new ProgressListener() {
            @Override
            public void onProgress(String phase, long done, long total, long bytes) {
                names.add(Thread.currentThread().getName() + (Thread.currentThread().isDaemon() ? "/daemon" : ""));
            }
        }, 4, 25);
        check(names.size() == 100, "100 calls from 4 native threads, got " + names.size());
        check(names.size() > 0 && Collections.frequency(names, "paimon-cleanup-worker/daemon") == names.size(),
                "attached as daemon threads named paimon-cleanup-worker");
        // The threads detached when they exited.
        boolean attached = false;
        for (int i = 0; i < 50; i++) {
            attached = false;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                attached |= t.getName().equals("paimon-cleanup-worker");
            }
            if (!attached) {
                break;
            }
            Thread.sleep(20);
        }
        check(!attached, "native threads detached at exit");
        checks++;
        try {
            PaimonCleanup.foreignThreadSelfTest(new ProgressListener() {
                @Override
                public void onProgress(String phase, long done, long total, long bytes) {
                    throw new Stop();
                }
            }, 2, 5);
            failures++;
            System.err.println("FAIL: exception from a native thread not rethrown");
        } catch (Stop expected) {
            System.out.println("  exception from a native thread rethrown on the caller");
        }
    }

    /** A listener's own exception type, to check it arrives unchanged. */
    private static final class Stop extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stop() {
            super("stop requested by the host");
        }
    }

    /**
     * The lazily decoded listing of {@code r} is whole: the count, paths(), forEachPath and the
     * JSON document agree, and decoding twice gives the same.
     */
    private static void checkListing(Report r, String what) {
        final List<Report.DeletedPath> streamed = new ArrayList<Report.DeletedPath>();
        r.forEachPath(new java.util.function.Consumer<Report.DeletedPath>() {
            @Override
            public void accept(Report.DeletedPath p) {
                streamed.add(p);
            }
        });
        List<Report.DeletedPath> listed = r.paths();
        check(r.pathCount() > 0 && r.pathCount() == listed.size() && streamed.size() == listed.size(),
                what + ": path count " + r.pathCount() + ", listed " + listed.size() + ", streamed " + streamed.size());
        String json = r.json();
        check(json.startsWith("{") && json.trim().endsWith("}") && json.equals(r.json()), what + ": JSON decoded whole");
        for (int i = 0; i < Math.min(listed.size(), streamed.size()); i++) {
            Report.DeletedPath a = listed.get(i);
            Report.DeletedPath b = streamed.get(i);
            check(a.path().equals(b.path()) && a.fileClass() == b.fileClass(), what + ": path " + i);
            check(json.contains("\"" + a.path() + "\""), what + ": JSON lists " + a.path());
        }
        check(pathsOf(r).equals(pathsOf(r)), what + ": decoding twice gives the same");
    }

    private static void testFixture(Path fixtures, Path tmp) throws Exception {
        final String rel = "parquet/pk_09.db/pk_09";
        System.out.println("fixture " + rel);
        final Executor exec = new Executor(2);
        try {
            Path a = copyTable(fixtures, rel, tmp, "a");
            TableContext ctx = new TableContext(a.toString(), new HashMap<String, String>());
            try {
                TableSummary before = ctx.summary(exec);
                check(before.hasSnapshots() && before.snapshotCount() == 8, "summary " + before);
                Report dry = ctx.expireSnapshots(exec, expireAll(true), null);
                check(dry.dryRun() && dry.kind() == ReportKind.EXPIRE_SNAPSHOTS && dry.expiredCount() == 7,
                        "dry run " + dry);
                check(dry.paths().size() == dry.totalFiles(), "dry run paths");
                checkListing(dry, "dry run");
                int saved = Report.copySlice;
                Report.copySlice = 3; // every path and the JSON cross many slices
                try {
                    Report sliced = ctx.expireSnapshots(exec, expireAll(true), null);
                    checkListing(sliced, "sliced copy");
                    check(pathsOf(sliced).equals(pathsOf(dry)), "sliced copy: the same paths");
                    check(sliced.json().replaceAll("\"elapsed_ms\":[0-9]+", "")
                            .equals(dry.json().replaceAll("\"elapsed_ms\":[0-9]+", "")),
                            "sliced copy: the same JSON");
                } finally {
                    Report.copySlice = saved;
                }
                check(ctx.summary(exec).snapshotCount() == 8, "dry run changed nothing");

                final List<String> phases = Collections.synchronizedList(new ArrayList<String>());
                final List<String> threads = Collections.synchronizedList(new ArrayList<String>());
                Report real = ctx.expireSnapshots(exec, expireAll(false), new RunOptions().progress(
                        new ProgressListener() {
                            @Override
                            public void onProgress(String phase, long done, long total, long bytes) {
                                if (phases.isEmpty() || !phases.get(phases.size() - 1).equals(phase)) {
                                    phases.add(phase);
                                }
                                String t = Thread.currentThread().getName();
                                if (!threads.contains(t)) {
                                    threads.add(t);
                                }
                            }
                        }));
                check(!real.dryRun() && real.expiredCount() == 7 && real.totalFiles() == dry.totalFiles()
                        && real.totalBytes() == dry.totalBytes(), "real run " + real);
                check(real.hasExpiredRange() && real.firstExpiredId() == 1 && real.lastExpiredId() == 7,
                        "expired range");
                check(real.earliestAfter() != null && real.earliestAfter().longValue() == 8, "earliest after");
                check(real.files(FileClass.SNAPSHOT_META) == 7 && real.failures().isEmpty(), "snapshot files");
                for (Report.DeletedPath p : real.paths()) {
                    check(!new File(a.toFile(), p.path()).exists(), p.path() + " deleted");
                }
                check(!phases.isEmpty(), "progress called");
                System.out.println("  expire: " + ScenarioFormat.report(real));
                System.out.println("  progress phases " + phases + " on threads " + threads);
                check(ctx.summary(exec).snapshotCount() == 1, "one snapshot left");
            } finally {
                ctx.close();
            }

            // Cancellation from the listener, then a rerun that converges.
            Path b = copyTable(fixtures, rel, tmp, "b");
            final TableContext ctxB = new TableContext(b.toString());
            try {
                final CancelToken token = new CancelToken();
                expectStatus(PaimonCleanupException.CANCELLED, "cancelled from the listener", new Body() {
                    @Override
                    public void run() {
                        ctxB.expireSnapshots(exec, expireAll(false), new RunOptions().cancelToken(token)
                                .progress(new ProgressListener() {
                                    @Override
                                    public void onProgress(String phase, long done, long total, long bytes) {
                                        token.cancel();
                                    }
                                }));
                    }
                });
                ctxB.expireSnapshots(exec, expireAll(false), null);
                check(ctxB.summary(exec).snapshotCount() == 1, "rerun converges");
            } finally {
                ctxB.close();
            }

            // A listener's exception stops the run and reaches the caller unchanged.
            Path c = copyTable(fixtures, rel, tmp, "c");
            TableContext ctxC = new TableContext(c.toString());
            try {
                checks++;
                try {
                    ctxC.expireSnapshots(exec, expireAll(false), new RunOptions().progress(new ProgressListener() {
                        @Override
                        public void onProgress(String phase, long done, long total, long bytes) {
                            throw new Stop();
                        }
                    }));
                    failures++;
                    System.err.println("FAIL: listener exception not rethrown");
                } catch (Stop expected) {
                    System.out.println("  listener exception rethrown");
                }
                check(ctxC.summary(exec).snapshotCount() > 1, "the run stopped early");
            } finally {
                ctxC.close();
            }

            // Orphan files: dry run, veto, a veto that throws, the real run.
            Path d = copyTable(fixtures, rel, tmp, "d");
            plant(d, "f1=10/bucket-0/data-planted-orphan-0.parquet", 20);
            plant(d, "manifest/manifest-planted-orphan-0", 10);
            TableContext ctxD = new TableContext(d.toString());
            try {
                Report od = ctxD.removeOrphanFiles(exec, new OrphanConfig().dryRun(true), null);
                check(od.kind() == ReportKind.REMOVE_ORPHAN_FILES && od.dryRun() && od.totalFiles() == 2
                        && od.cutoffMs() > 0, "orphan dry run " + od);
                final AtomicInteger asked = new AtomicInteger();
                final List<String> vetoThreads = Collections.synchronizedList(new ArrayList<String>());
                Report ov = ctxD.removeOrphanFiles(exec, new OrphanConfig().veto(new VetoListener() {
                    @Override
                    public boolean keep(String path) {
                        asked.incrementAndGet();
                        vetoThreads.add(Thread.currentThread().getName());
                        return path.startsWith("f1=10/");
                    }
                }), null);
                System.out.println("  veto called on threads " + vetoThreads);
                check(ov.vetoed() == 1 && ov.totalFiles() == 1 && ov.files(FileClass.MANIFEST) == 1
                        && asked.get() == 2, "veto " + ov);
                checks++;
                try {
                    ctxD.removeOrphanFiles(exec, new OrphanConfig().veto(new VetoListener() {
                        @Override
                        public boolean keep(String path) {
                            throw new Stop();
                        }
                    }), null);
                    failures++;
                    System.err.println("FAIL: veto exception not rethrown");
                } catch (Stop expected) {
                    System.out.println("  veto exception rethrown");
                }
                check(Files.exists(d.resolve("f1=10/bucket-0/data-planted-orphan-0.parquet")),
                        "file kept when the veto threw");
                Report or = ctxD.removeOrphanFiles(exec, null, null);
                check(or.totalFiles() == 1 && or.files(FileClass.DATA) == 1, "orphan run " + or);

                // Drop a partition; the files stay until a snapshot expiry.
                TableSummary before = ctxD.summary(exec);
                Map<String, String> spec = new HashMap<String, String>();
                spec.put("f1", "20");
                List<String> filesBefore = tree(d);
                Report preview = ctxD.previewDropPartitions(exec, Collections.singletonList(spec), null);
                check(preview.kind() == ReportKind.DROP_PARTITIONS && preview.dryRun()
                        && preview.committedSnapshotIds().isEmpty()
                        && preview.names().equals(Collections.singletonList("f1=20"))
                        && preview.filesMarkedDeleted() > 0, "preview " + preview);
                check(tree(d).equals(filesBefore), "the preview changed nothing");
                Report dp = ctxD.dropPartitions(exec, Collections.singletonList(spec), null);
                check(dp.filesMarkedDeleted() == preview.filesMarkedDeleted()
                        && dp.names().equals(preview.names()), "drop as previewed " + dp);
                check(dp.kind() == ReportKind.DROP_PARTITIONS && dp.names().equals(Collections.singletonList("f1=20"))
                        && dp.filesMarkedDeleted() > 0
                        && dp.committedSnapshotIds().equals(Collections.singletonList(before.latestSnapshotId() + 1)),
                        "drop " + dp);
                check(dp.partitions().size() == 1 && dp.partitions().get(0).get(0)[0].equals("f1")
                        && dp.partitions().get(0).get(0)[1].equals("20"), "dropped partition values");
                check(Files.exists(d.resolve("f1=20")), "drop only commits");
                final TableContext ctxD2 = ctxD;
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "drop by an unknown key", new Body() {
                    @Override
                    public void run() {
                        ctxD2.dropPartitions(exec,
                                Collections.singletonList(Collections.singletonMap("nope", "1")), null);
                    }
                });
            } finally {
                ctxD.close();
            }

            // Threads share the executor and a context.
            Path e = copyTable(fixtures, rel, tmp, "e");
            final TableContext ctxE = new TableContext(e.toString());
            try {
                final AtomicInteger ok = new AtomicInteger();
                List<Thread> ts = new ArrayList<Thread>();
                for (int i = 0; i < 4; i++) {
                    Thread t = new Thread(new Runnable() {
                        @Override
                        public void run() {
                            if (ctxE.summary(exec).snapshotCount() == 8) {
                                ok.incrementAndGet();
                            }
                        }
                    });
                    t.start();
                    ts.add(t);
                }
                for (Thread t : ts) {
                    t.join();
                }
                check(ok.get() == 4, "concurrent summaries");
            } finally {
                ctxE.close();
            }
        } finally {
            exec.close();
        }
    }

    /** A context on a branch (TableContext.onBranch): only that branch's snapshots expire. */
    private static void testBranch(Path fixtures, Path tmp) throws Exception {
        final String rel =
                "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch";
        System.out.println("branch " + rel);
        final Executor exec = new Executor(2);
        try {
            final Path t = copyTable(fixtures, rel, tmp, "branch");
            TableContext main = new TableContext(t.toString());
            TableContext branch = TableContext.onBranch(t.toString(), "test", null);
            try {
                TableSummary mainBefore = main.summary(exec);
                Report r = branch.expireSnapshots(exec, expireAll(false), null);
                check(r.expiredCount() == 1, "branch expiry " + r);
                TableSummary b = branch.summary(exec);
                check(b.snapshotCount() == 1 && b.earliestSnapshotId() == 2, "branch after " + b);
                TableSummary m = main.summary(exec);
                check(m.snapshotCount() == mainBefore.snapshotCount()
                        && m.liveFileCount() == mainBefore.liveFileCount(), "main unchanged " + m);
            } finally {
                branch.close();
                main.close();
            }
            expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "path-like branch", new Body() {
                @Override
                public void run() {
                    TableContext.onBranch(t.toString(), "../x", null).close();
                }
            });
        } finally {
            exec.close();
        }
    }

    /** The paths of a report, sorted. */
    private static List<String> pathsOf(Report r) {
        List<String> out = new ArrayList<String>();
        for (Report.DeletedPath p : r.paths()) {
            out.add(p.fileClass() + " " + p.path());
        }
        Collections.sort(out);
        return out;
    }

    /** Merges results in a shuffled order and a random tree shape, as an engine's reduce may. */
    private static byte[] mergeRandomly(List<byte[]> parts, java.util.Random rnd) {
        List<byte[]> todo = new ArrayList<byte[]>(parts);
        Collections.shuffle(todo, rnd);
        if (todo.isEmpty()) {
            return new byte[0];
        }
        while (todo.size() > 1) {
            byte[] a = todo.remove(rnd.nextInt(todo.size()));
            byte[] b = todo.remove(rnd.nextInt(todo.size()));
            todo.add(rnd.nextBoolean() ? OrphanUnits.merge(a, b) : OrphanUnits.merge(b, a));
        }
        return todo.get(0);
    }

    /** Merges snapshot-expiry results in a shuffled order, left to right (neutral: empty). */
    private static byte[] mergeExpiry(List<byte[]> parts, java.util.Random rnd) {
        List<byte[]> todo = new ArrayList<byte[]>(parts);
        Collections.shuffle(todo, rnd);
        byte[] out = new byte[0];
        for (byte[] p : todo) {
            out = rnd.nextBoolean() ? ExpiryUnits.merge(out, p) : ExpiryUnits.merge(p, out);
        }
        return out;
    }

    /**
     * Snapshot expiry's sharded decision through the JNI glue (split, gate, decideShard,
     * conclude, then the delete units and finish) equals the one-call run; a missing or doubled
     * shard report and another shard count are refused before anything is deleted.
     */
    private static void testExpiryShards(Path fixtures, Path tmp) throws Exception {
        final String rel = "parquet/pk_09.db/pk_09";
        final int shards = 3;
        System.out.println("expiry shards " + rel);
        final Executor exec = new Executor(2);
        try {
            Path one = copyTable(fixtures, rel, tmp, "xshard-one");
            Path many = copyTable(fixtures, rel, tmp, "xshard-many");
            TableContext c1 = new TableContext(one.toString());
            final TableContext c2 = new TableContext(many.toString());
            try {
                Report single = c1.expireSnapshots(exec, expireAll(false), null);
                java.util.Random rnd = new java.util.Random(39);
                final ExpiryUnits.Step plan = ExpiryUnits.plan(c2, exec, expireAll(false), null);
                check(!plan.units().isEmpty(), "candidate units " + plan.units().size());
                List<byte[]> summaries = new ArrayList<byte[]>();
                List<List<byte[]>> pieces = new ArrayList<List<byte[]>>();
                for (int i = 0; i < shards; i++) {
                    pieces.add(new ArrayList<byte[]>());
                }
                for (byte[] u : plan.units()) {
                    ExpiryUnits.Split split = ExpiryUnits.split(ExpiryUnits.execute(exec, u, null, null), shards);
                    check(split.shards().size() == shards, "a piece per shard");
                    summaries.add(split.summary());
                    for (int i = 0; i < shards; i++) {
                        pieces.get(i).add(split.shards().get(i));
                    }
                }
                final byte[] summary = mergeExpiry(summaries, rnd);
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "another shard count", new Body() {
                    @Override
                    public void run() {
                        ExpiryUnits.gate(c2, exec, null, plan.state(), summary, shards + 1);
                    }
                });
                final ExpiryUnits.Gated gated = ExpiryUnits.gate(c2, exec, null, plan.state(), summary, shards);
                final List<byte[]> reports = new ArrayList<byte[]>();
                List<byte[]> deleteUnits = new ArrayList<byte[]>();
                for (int i = shards - 1; i >= 0; i--) {
                    ExpiryUnits.ShardDecision d = ExpiryUnits.decideShard(
                            exec, gated.gate(), i, mergeExpiry(pieces.get(i), rnd), null, null);
                    reports.add(d.report());
                    deleteUnits.addAll(d.deleteUnits());
                }
                check(!deleteUnits.isEmpty(), "delete units");
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "a missing shard report", new Body() {
                    @Override
                    public void run() {
                        ExpiryUnits.conclude(gated.decision(), reports.subList(1, reports.size()));
                    }
                });
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "a doubled shard report", new Body() {
                    @Override
                    public void run() {
                        List<byte[]> doubled = new ArrayList<byte[]>(reports);
                        doubled.set(0, reports.get(1));
                        ExpiryUnits.conclude(gated.decision(), doubled);
                    }
                });
                check(c2.summary(exec).snapshotCount() == 8, "nothing expired before the deletions");
                byte[] decision = ExpiryUnits.conclude(gated.decision(), reports);
                List<byte[]> results = new ArrayList<byte[]>();
                for (byte[] u : deleteUnits) {
                    results.add(ExpiryUnits.execute(exec, u, new HashMap<String, String>(), null));
                }
                Report sharded = ExpiryUnits.finish(c2, exec, null, decision, mergeExpiry(results, rnd));
                System.out.println("  sharded: " + ScenarioFormat.report(sharded));
                check(sharded.kind() == ReportKind.EXPIRE_SNAPSHOTS && sharded.expiredCount() == single.expiredCount()
                        && sharded.totalFiles() == single.totalFiles() && sharded.totalBytes() == single.totalBytes(),
                        "sharded report " + sharded + " vs " + single);
                check(pathsOf(sharded).equals(pathsOf(single)), "shards delete what one call deletes: "
                        + pathsOf(sharded) + " vs " + pathsOf(single));
                for (Report.DeletedPath p : sharded.paths()) {
                    check(!new File(many.toFile(), p.path()).exists(), p.path() + " deleted");
                }
                check(c2.summary(exec).snapshotCount() == c1.summary(exec).snapshotCount(), "versions kept");
            } finally {
                c1.close();
                c2.close();
            }
        } finally {
            exec.close();
        }
    }

    /**
     * The sharded expiry with its paths handed to the tasks (gate with pathsToTasks): the paths
     * the shard tasks (dry run) or delete units (real run) hand out are exactly the one-call
     * run's data and changelog paths; the report has its counts, lists the first 20 of them and
     * the metadata files, and says its paths are elsewhere; plain execute refuses such a delete
     * unit with nothing deleted.
     */
    private static void testExpiryShardsPathsToTasks(Path fixtures, Path tmp, boolean dryRun) throws Exception {
        final String rel = "parquet/pk_09.db/pk_09";
        final int shards = 3;
        System.out.println("expiry shards, paths to the tasks, dry run " + dryRun + ": " + rel);
        final Executor exec = new Executor(2);
        try {
            Path one = copyTable(fixtures, rel, tmp, "xpaths-one-" + dryRun);
            final Path many = copyTable(fixtures, rel, tmp, "xpaths-many-" + dryRun);
            TableContext c1 = new TableContext(one.toString());
            TableContext c2 = new TableContext(many.toString());
            try {
                Report single = c1.expireSnapshots(exec, expireAll(dryRun), null);
                java.util.Random rnd = new java.util.Random(41);
                ExpiryUnits.Step plan = ExpiryUnits.plan(c2, exec, expireAll(dryRun), null);
                List<byte[]> summaries = new ArrayList<byte[]>();
                List<List<byte[]>> pieces = new ArrayList<List<byte[]>>();
                for (int i = 0; i < shards; i++) {
                    pieces.add(new ArrayList<byte[]>());
                }
                for (byte[] u : plan.units()) {
                    ExpiryUnits.Split split = ExpiryUnits.split(ExpiryUnits.execute(exec, u, null, null), shards);
                    summaries.add(split.summary());
                    for (int i = 0; i < shards; i++) {
                        pieces.get(i).add(split.shards().get(i));
                    }
                }
                ExpiryUnits.Gated gated =
                        ExpiryUnits.gate(c2, exec, null, plan.state(), mergeExpiry(summaries, rnd), shards, true);
                List<byte[]> reports = new ArrayList<byte[]>();
                List<byte[]> deleteUnits = new ArrayList<byte[]>();
                List<String> taskPaths = new ArrayList<String>();
                for (int i = 0; i < shards; i++) {
                    ExpiryUnits.ShardDecision d = ExpiryUnits.decideShard(
                            exec, gated.gate(), i, mergeExpiry(pieces.get(i), rnd), null, null);
                    reports.add(d.report());
                    deleteUnits.addAll(d.deleteUnits());
                    taskPaths.addAll(d.paths());
                }
                check(dryRun == deleteUnits.isEmpty(), "delete units only in a real run: " + deleteUnits.size());
                check(!dryRun || !taskPaths.isEmpty(), "a dry run's shards hand out their paths");
                byte[] decision = ExpiryUnits.conclude(gated.decision(), reports);
                if (!deleteUnits.isEmpty()) {
                    final byte[] first = deleteUnits.get(0);
                    expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "plain execute of such a unit", new Body() {
                        @Override
                        public void run() {
                            ExpiryUnits.execute(exec, first, null, null);
                        }
                    });
                    check(c2.summary(exec).snapshotCount() == 8, "nothing expired before the deletions");
                }
                List<byte[]> results = new ArrayList<byte[]>();
                for (byte[] u : deleteUnits) {
                    ExpiryUnits.Executed e = ExpiryUnits.executeHandingPaths(exec, u, null, null);
                    results.add(e.result());
                    taskPaths.addAll(e.paths());
                }
                Report counted = ExpiryUnits.finish(c2, exec, null, decision, mergeExpiry(results, rnd));
                System.out.println("  counts only: " + ScenarioFormat.report(counted) + ", " + taskPaths.size()
                        + " paths with the tasks");
                check(counted.expiredCount() == single.expiredCount() && counted.totalFiles() == single.totalFiles()
                        && counted.totalBytes() == single.totalBytes() && counted.failures().isEmpty(),
                        "counts " + counted + " vs " + single);
                List<String> all = new ArrayList<String>();
                for (Report.DeletedPath p : single.paths()) {
                    all.add(p.path());
                }
                int data = taskPaths.size();
                check(data > 0 && data <= all.size(), "the tasks hold " + data + " of " + all.size());
                List<String> want = new ArrayList<String>(all.subList(0, data));
                List<String> got = new ArrayList<String>(taskPaths);
                Collections.sort(want);
                Collections.sort(got);
                check(got.equals(want), "the tasks' paths are the one-call run's: " + got + " vs " + want);
                List<String> listed = new ArrayList<String>(all.subList(0, Math.min(20, data)));
                listed.addAll(all.subList(data, all.size()));
                List<String> reported = new ArrayList<String>();
                for (Report.DeletedPath p : counted.paths()) {
                    reported.add(p.path());
                }
                check(reported.equals(listed), "the report lists the sample and the metadata: " + reported);
                check(counted.json().contains("\"paths_elsewhere\":true"), "the JSON says the paths are elsewhere");
                check(!single.json().contains("paths_elsewhere"), "the one-call report has every path");
                check(counted.pathsElsewhere(), "pathsElsewhere() says the listing is a sample");
                check(!single.pathsElsewhere(), "pathsElsewhere() is false for the one-call report");
                for (String p : taskPaths) {
                    check(dryRun == new File(many.toFile(), p).exists(), p + " deleted unless a dry run");
                }
                check(c2.summary(exec).snapshotCount() == c1.summary(exec).snapshotCount(), "versions kept");
            } finally {
                c1.close();
                c2.close();
            }
        } finally {
            exec.close();
        }
    }

    /** Orphan removal as units (plan, execute, merge, decide, finish) equals the one-call run. */
    private static void testOrphanUnits(Path fixtures, Path tmp) throws Exception {
        final String rel =
                "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch";
        System.out.println("orphan units " + rel);
        final Executor exec = new Executor(2);
        try {
            String[] orphans = {"manifest/manifest-planted-units-0", "manifest/manifest-list-planted-units-0",
                "snapshot/.snapshot-9.planted.tmp"};
            Path one = copyTable(fixtures, rel, tmp, "units-one");
            Path many = copyTable(fixtures, rel, tmp, "units-many");
            for (Path t : new Path[] {one, many}) {
                for (String o : orphans) {
                    plant(t, o, 7);
                }
            }
            long cutoff = System.currentTimeMillis() - 24L * 3600 * 1000;
            OrphanConfig cfg = new OrphanConfig().olderThanMs(cutoff);
            TableContext c1 = new TableContext(one.toString());
            TableContext c2 = new TableContext(many.toString());
            try {
                Report single = c1.removeOrphanFiles(exec, cfg, null);
                java.util.Random rnd = new java.util.Random(20);
                OrphanUnits.Plan plan = OrphanUnits.plan(c2, exec, cfg, null);
                check(plan.units().size() >= 2 && plan.state().length > 0, "plan " + plan.units().size());
                List<byte[]> units = new ArrayList<byte[]>(plan.units());
                Collections.shuffle(units, rnd);
                List<byte[]> parts = new ArrayList<byte[]>();
                for (byte[] u : units) {
                    parts.add(OrphanUnits.execute(exec, u, null, null));
                }
                // Associative and commutative, byte for byte.
                byte[] merged = mergeRandomly(parts, rnd);
                check(java.util.Arrays.equals(merged, mergeRandomly(parts, new java.util.Random(7))),
                        "merge is order and grouping free");
                // A missing result is refused, nothing deleted.
                final byte[] state = plan.state();
                final byte[] partial = mergeRandomly(parts.subList(1, parts.size()), rnd);
                final TableContext ctx2 = c2;
                final OrphanConfig cfg2 = cfg;
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "a missing unit result", new Body() {
                    @Override
                    public void run() {
                        OrphanUnits.decide(ctx2, exec, cfg2, null, state, partial);
                    }
                });
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "a unit merged twice", new Body() {
                    @Override
                    public void run() {
                        OrphanUnits.merge(partial, partial);
                    }
                });
                expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "not a unit", new Body() {
                    @Override
                    public void run() {
                        OrphanUnits.execute(exec, new byte[] {1, 2, 3}, null, null);
                    }
                });
                for (String o : orphans) {
                    check(Files.exists(many.resolve(o)), o + " still there before the deletions");
                }
                OrphanUnits.Decision d = OrphanUnits.decide(c2, exec, cfg, null, plan.state(), merged);
                check(!d.deleteUnits().isEmpty(), "delete units");
                List<byte[]> results = new ArrayList<byte[]>();
                for (byte[] u : d.deleteUnits()) {
                    results.add(OrphanUnits.execute(exec, u, new HashMap<String, String>(), null));
                }
                Report units2 = OrphanUnits.finish(c2, exec, null, d.decision(), mergeRandomly(results, rnd));
                System.out.println("  units: " + ScenarioFormat.report(units2));
                check(units2.kind() == ReportKind.REMOVE_ORPHAN_FILES && units2.totalFiles() == orphans.length,
                        "units report " + units2);
                check(pathsOf(units2).equals(pathsOf(single)), "units delete what one call deletes: "
                        + pathsOf(units2) + " vs " + pathsOf(single));
                check(units2.candidates() == single.candidates() && units2.referenced() == single.referenced()
                        && units2.cutoffMs() == single.cutoffMs(), "same counts");
                for (String o : orphans) {
                    check(!Files.exists(many.resolve(o)), o + " deleted");
                }
                check(c2.summary(exec).snapshotCount() == c1.summary(exec).snapshotCount(), "versions kept");
            } finally {
                c1.close();
                c2.close();
            }
        } finally {
            exec.close();
        }
    }

    /** BinaryMerge with a multiset union as the merge (associative, commutative, the empty array
     *  neutral): every part ends up in the result once, whatever the count, and the bytes passed
     *  through the merge stay within S * (log2 n + 2), not the S * n / 2 of a running merge. */
    private static void testBinaryMerge() {
        System.out.println("binary merge");
        final long[] passed = {0};
        java.util.function.BinaryOperator<byte[]> union = new java.util.function.BinaryOperator<byte[]>() {
            @Override
            public byte[] apply(byte[] a, byte[] b) {
                passed[0] += a.length + b.length;
                byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
                System.arraycopy(b, 0, out, a.length, b.length);
                java.util.Arrays.sort(out);
                return out;
            }
        };
        for (int n : new int[] {0, 1, 2, 3, 7, 64, 1000}) {
            passed[0] = 0;
            List<byte[]> parts = new ArrayList<byte[]>();
            byte[] want = new byte[n];
            for (int i = 0; i < n; i++) {
                parts.add(new byte[] {(byte) (i * 31)});
                want[i] = (byte) (i * 31);
            }
            java.util.Arrays.sort(want);
            byte[] got = BinaryMerge.all(parts, union);
            check(java.util.Arrays.equals(got, want), "binary merge of " + n + " parts");
            double log = n <= 1 ? 0 : Math.log(n) / Math.log(2);
            check(passed[0] <= (long) (n * (log + 2)), "bytes merged for " + n + " parts: " + passed[0]);
        }
        BinaryMerge m = new BinaryMerge(union);
        check(m.isEmpty() && m.result().length == 0, "an empty counter gives the empty result");
        m.add(new byte[] {5});
        m.add(new byte[] {3});
        check(!m.isEmpty() && java.util.Arrays.equals(m.result(), new byte[] {3, 5}), "two parts");
        m.clear();
        check(m.isEmpty(), "cleared");
    }

    /** The tables of a warehouse: a pattern picks them, sorted by name; each location opens as
     *  a table; no match, a pattern without '.' and an object-store URI are errors. */
    private static void testListTables(Path fixtures, Path tmp) throws Exception {
        System.out.println("warehouse");
        final Path wh = tmp.resolve("wh");
        String pk = "parquet/pk_09.db/pk_09";
        copyTable(fixtures, pk, wh, "db.db/pk_09");
        copyTable(fixtures, pk, wh, "other.db/pk_copy");
        copyTable(fixtures,
                "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
                wh, "db.db/append");
        Files.createDirectories(wh.resolve("db.db/not_a_table/snapshot"));
        java.util.SortedMap<String, String> all = PaimonCleanup.listTables(wh.toString(), "*.*");
        check(new ArrayList<String>(all.keySet()).equals(
                java.util.Arrays.asList("db.append", "db.pk_09", "other.pk_copy")), "tables " + all);
        java.util.SortedMap<String, String> db = PaimonCleanup.listTables(wh.toString(), "db.pk*");
        check(db.size() == 1 && db.containsKey("db.pk_09"), "db.pk* " + db);
        String location = db.get("db.pk_09");
        check(location != null && Files.isSameFile(Paths.get(location), wh.resolve("db.db/pk_09")),
                "the location is the table's directory: " + location);
        if (location != null) {
            Executor exec = new Executor(1);
            TableContext ctx = new TableContext(location);
            try {
                check(ctx.summary(exec).hasSnapshots(), "the listed location opens as the table");
            } finally {
                ctx.close();
                exec.close();
            }
        }
        expectStatus(PaimonCleanupException.NOT_FOUND, "no table matches", new Body() {
            @Override
            public void run() {
                PaimonCleanup.listTables(wh.toString(), "db.nothing*");
            }
        });
        expectStatus(PaimonCleanupException.INVALID_ARGUMENT, "pattern without a dot", new Body() {
            @Override
            public void run() {
                PaimonCleanup.listTables(wh.toString(), "nodot");
            }
        });
        expectStatus(PaimonCleanupException.UNSUPPORTED, "object-store warehouse", new Body() {
            @Override
            public void run() {
                PaimonCleanup.listTables("s3://bucket/wh", "db.*");
            }
        });
        expectStatus(PaimonCleanupException.NULL_POINTER, "null pattern", new Body() {
            @Override
            public void run() {
                PaimonCleanup.listTables(wh.toString(), null);
            }
        });
    }

    public static void main(String[] args) throws Exception {
        Path tmp = Files.createTempDirectory("paimon-cleanup-java");
        try {
            testBasics(tmp);
            testForeignThreads();
            testBinaryMerge();
            String env = System.getenv("PAIMON_FIXTURES");
            Path fixtures = env == null || env.isEmpty() ? null : Paths.get(env);
            if (fixtures == null || !Files.isDirectory(fixtures)) {
                boolean required = "1".equals(System.getenv("PAIMON_REQUIRE_FIXTURES"));
                System.out.println((required ? "FAIL" : "SKIP") + ": fixture tables not found");
                System.out.println("java binding: " + checks + " checks, " + failures + " failed");
                System.exit(required || failures > 0 ? 1 : 77);
            }
            testFixture(fixtures, tmp);
            testMaxMemory(fixtures, tmp);
            testLog(fixtures, tmp);
            testBranch(fixtures, tmp);
            testListTables(fixtures, tmp);
            testOrphanUnits(fixtures, tmp);
            testExpiryShards(fixtures, tmp);
            testExpiryShardsPathsToTasks(fixtures, tmp, true);
            testExpiryShardsPathsToTasks(fixtures, tmp, false);
        } finally {
            deleteTree(tmp);
        }
        System.out.println("java binding: " + checks + " checks, " + failures + " failed");
        System.exit(failures == 0 ? 0 : 1);
    }
}
