package org.paimoncleanup.ref;

import org.apache.paimon.Snapshot;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.operation.CleanOrphanFilesResult;
import org.apache.paimon.operation.LocalOrphanFilesClean;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Paimon Java as a reference: one JVM that answers JSON lines on stdin with JSON lines on stdout.
 *
 * <p>Commands: {@code write} (a random table history from a seed), {@code read} (a hash of the
 * rows of every retained version), {@code clean} (Java's own maintenance operation, reporting
 * every deleted path) and {@code commit-and-expire} (Java writes once more and expires).
 */
public final class Harness {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Retention that never expires anything while the history is written. */
    private static final Map<String, String> NO_EXPIRY = new HashMap<>();

    static {
        NO_EXPIRY.put("snapshot.num-retained.min", "1000000");
        NO_EXPIRY.put("snapshot.num-retained.max", "1000000");
        NO_EXPIRY.put("changelog.num-retained.min", "1000000");
        NO_EXPIRY.put("changelog.num-retained.max", "1000000");
        NO_EXPIRY.put("snapshot.time-retained", "36500 d");
        NO_EXPIRY.put("changelog.time-retained", "36500 d");
    }

    private static final String[] P1_VALUES = {
        null, "", " ", "a/b", "x=y", "50%", "\u00e9#?", "plain", "sp ace"
    };
    private static final Integer[] P2_VALUES = {null, 0, 7, -1};
    /** Partition values that a partition spec can name unambiguously (overwrite, drop). */
    private static final String[] P1_SPEC_VALUES = {"a/b", "x=y", "50%", "plain"};

    private Harness() {}

    public static void main(String[] args) throws Exception {
        // Paimon and Hadoop may print to stdout: keep it for the protocol only.
        PrintStream out =
                new PrintStream(
                        new java.io.FileOutputStream(java.io.FileDescriptor.out),
                        true,
                        StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode reply;
            try {
                JsonNode req = JSON.readTree(line);
                reply = handle(req);
                reply.put("ok", true);
            } catch (Throwable t) {
                reply = JSON.createObjectNode();
                reply.put("ok", false);
                reply.put("error", String.valueOf(t));
                StringWriter sw = new StringWriter();
                t.printStackTrace(new PrintWriter(sw));
                reply.put("trace", sw.toString());
            }
            out.println(JSON.writeValueAsString(reply));
            out.flush();
        }
    }

    private static ObjectNode handle(JsonNode req) throws Exception {
        String cmd = req.path("cmd").asText();
        switch (cmd) {
            case "ping":
                return JSON.createObjectNode();
            case "write":
                return write(
                        req.path("seed").asLong(),
                        req.path("dir").asText(),
                        req.path("size").asInt(40),
                        req.path("decoupled").asText("all"),
                        req.path("extras").asBoolean(true));
            case "read":
                return read(req.path("dir").asText(), req.path("full").asBoolean(false));
            case "clean":
                return clean(req.path("dir").asText(), req.path("op").asText(), req.path("settings"));
            case "times":
                return times(req.path("dir").asText());
            case "commit-and-expire":
                return commitAndExpire(req.path("dir").asText(), req.path("seed").asLong());
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    // ---------------------------------------------------------------- table shape and rows

    /** The shape of a generated table, chosen from the seed. */
    private static final class Shape {
        boolean pk;
        int bucket;
        int partitionKeys;
        String changelogProducer = "none";
        String mergeEngine = "deduplicate";
        boolean deletionVectors;
        String format;
        /** Drawn from a second generator, so that the main history of a seed stays as it was. */
        boolean autoTags;
        boolean statistics;
        boolean iceberg;

        ObjectNode json() {
            ObjectNode n = JSON.createObjectNode();
            n.put("pk", pk);
            n.put("bucket", bucket);
            n.put("partition_keys", partitionKeys);
            n.put("changelog_producer", changelogProducer);
            n.put("merge_engine", mergeEngine);
            n.put("deletion_vectors", deletionVectors);
            n.put("format", format);
            n.put("auto_tags", autoTags);
            n.put("statistics", statistics);
            n.put("iceberg", iceberg);
            return n;
        }
    }

    private static Shape shape(Random rnd) {
        Shape s = new Shape();
        int kind = rnd.nextInt(3);
        s.pk = kind == 2;
        s.bucket = kind == 0 ? -1 : 1 + rnd.nextInt(2);
        s.partitionKeys = rnd.nextInt(3);
        s.format = new String[] {"parquet", "orc", "avro"}[rnd.nextInt(3)];
        if (s.pk) {
            s.mergeEngine =
                    new String[] {"deduplicate", "partial-update", "first-row"}[rnd.nextInt(3)];
            if (s.mergeEngine.equals("first-row")) {
                s.changelogProducer = rnd.nextBoolean() ? "none" : "lookup";
            } else {
                s.changelogProducer =
                        new String[] {"none", "input", "lookup", "full-compaction"}[
                                rnd.nextInt(4)];
                s.deletionVectors =
                        !s.changelogProducer.equals("full-compaction") && rnd.nextBoolean();
            }
        }
        return s;
    }

    private static Schema schema(Shape s) {
        Schema.Builder b =
                Schema.newBuilder()
                        .column("k", DataTypes.INT().notNull())
                        .column("p1", DataTypes.STRING())
                        .column("p2", DataTypes.INT())
                        .column("v", DataTypes.STRING())
                        .column("n", DataTypes.BIGINT());
        List<String> parts = new ArrayList<>();
        if (s.partitionKeys >= 1) {
            parts.add("p1");
        }
        if (s.partitionKeys >= 2) {
            parts.add("p2");
        }
        b.partitionKeys(parts);
        if (s.pk) {
            List<String> keys = new ArrayList<>(parts);
            keys.add("k");
            b.primaryKey(keys);
            b.option("merge-engine", s.mergeEngine);
            b.option("changelog-producer", s.changelogProducer);
            if (s.deletionVectors) {
                b.option("deletion-vectors.enabled", "true");
            }
        } else if (s.bucket > 0) {
            b.option("bucket-key", "k");
        }
        b.option("bucket", String.valueOf(s.bucket));
        b.option("file.format", s.format);
        if (s.autoTags) {
            // A tag of the day after every batch commit, replaced by the next one.
            b.option("tag.automatic-creation", "batch");
            b.option("tag.default-time-retained", "1 d");
        }
        if (s.iceberg) {
            b.option("metadata.iceberg.storage", "table-location");
        }
        return b.build();
    }

    private static GenericRow row(Random rnd, Shape s, RowKind kind, String p1, Integer p2) {
        return GenericRow.ofKind(
                kind,
                rnd.nextInt(40),
                p1 == null ? null : BinaryString.fromString(p1),
                p2,
                BinaryString.fromString("v" + rnd.nextInt(1000)),
                rnd.nextInt(5) == 0 ? null : rnd.nextLong());
    }

    /** A partition (p1, p2) for a row: NULL values only where Paimon allows them. */
    private static Object[] partition(Random rnd, Shape s) {
        String p1 = null;
        Integer p2 = null;
        if (s.partitionKeys >= 1) {
            do {
                p1 = P1_VALUES[rnd.nextInt(P1_VALUES.length)];
            } while (p1 == null && s.pk);
        } else {
            p1 = "np";
        }
        if (s.partitionKeys >= 2) {
            do {
                p2 = P2_VALUES[rnd.nextInt(P2_VALUES.length)];
            } while (p2 == null && s.pk);
        } else {
            p2 = 1;
        }
        return new Object[] {p1, p2};
    }

    private static FileStoreTable open(FileIO io, String dir) {
        return FileStoreTableFactory.create(io, new Path(new File(dir).toURI().toString()));
    }

    private static IOManager ioManager;

    /** One spill/lookup directory manager for the whole run (each one creates directories). */
    private static synchronized IOManager ioManager() {
        if (ioManager == null) {
            ioManager = IOManager.create(System.getProperty("java.io.tmpdir"));
        }
        return ioManager;
    }

    // ---------------------------------------------------------------- write

    /**
     * Writes a random history from {@code seed}: {@code size} steps, then (with {@code
     * decoupled} = "all", or "none-only" for tables whose changelog producer is none) maybe a
     * Java expiry that keeps changelogs longer than snapshots.
     */
    private static ObjectNode write(
            long seed, String dir, int size, String decoupled, boolean extras) throws Exception {
        ROWS_BY_PLAN.clear();
        Random rnd = new Random(seed);
        Shape s = shape(rnd);
        // Features added after the first histories: drawn apart, so a seed without them writes
        // the history it wrote before.
        Random extra = new Random(new java.util.SplittableRandom(seed).nextLong());
        s.autoTags = extra.nextInt(4) == 0 && extras;
        s.statistics = extra.nextInt(4) == 0 && extras;
        s.iceberg = extra.nextInt(4) == 0 && extras;
        LocalFileIO io = LocalFileIO.create();
        Path path = new Path(new File(dir).toURI().toString());
        new SchemaManager(io, path).createTable(schema(s));
        FileStoreTable main = open(io, dir).copy(NO_EXPIRY);

        Map<String, Integer> stats = new TreeMap<>();
        List<String> tags = new ArrayList<>();
        List<String> branches = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        boolean consumerMade = false;
        for (int step = 0; step < size; step++) {
            // Most steps write main; once a branch exists, some write a branch.
            FileStoreTable target = main;
            String targetName = "main";
            if (!branches.isEmpty() && rnd.nextInt(4) == 0) {
                targetName = branches.get(rnd.nextInt(branches.size()));
                target = main.switchToBranch(targetName).copy(NO_EXPIRY);
            }
            int dice = rnd.nextInt(100);
            String op;
            try {
                if (dice < 50 || step < 3) {
                    op = "insert";
                    commitRows(target, rnd, s, 1 + rnd.nextInt(12), false);
                } else if (dice < 58 && s.pk && s.mergeEngine.equals("deduplicate")) {
                    op = "delete";
                    commitRows(target, rnd, s, 1 + rnd.nextInt(5), true);
                } else if (dice < 68 && s.bucket > 0) {
                    op = rnd.nextBoolean() ? "compact-full" : "compact";
                    compact(target, rnd, op.equals("compact-full"));
                } else if (dice < 72 && s.partitionKeys > 0) {
                    op = "overwrite-partition";
                    overwrite(target, rnd, s, true);
                } else if (dice < 74) {
                    op = "overwrite-table";
                    overwrite(target, rnd, s, false);
                } else if (dice < 78 && s.partitionKeys > 0) {
                    op = "drop-partition";
                    dropPartition(target, rnd);
                } else if (dice < 85) {
                    op = "tag";
                    Long latest = target.snapshotManager().latestSnapshotId();
                    if (latest == null) {
                        continue;
                    }
                    long id = 1 + (long) rnd.nextInt(latest.intValue());
                    if (target.snapshotManager().snapshotExists(id)) {
                        String name = (targetName.equals("main") ? "t" : targetName + "-t") + step;
                        if (extra.nextInt(3) == 0 && extras) {
                            // A tag with its own time retention: past already, or a day.
                            target.createTag(
                                    name,
                                    id,
                                    Duration.ofMillis(extra.nextBoolean() ? 1 : 86_400_000L));
                        } else {
                            target.createTag(name, id);
                        }
                        if (targetName.equals("main")) {
                            tags.add(name);
                        }
                    }
                } else if (dice < 89 && !tags.isEmpty() && branches.size() < 3) {
                    op = "branch";
                    String tag = tags.get(rnd.nextInt(tags.size()));
                    String name = "b" + step;
                    main.createBranch(name, tag);
                    branches.add(name);
                } else if (dice < 91 && !consumerMade) {
                    op = "consumer";
                    consume(main, rnd, "c" + rnd.nextInt(3));
                    consumerMade = true;
                    int more = extras ? extra.nextInt(3) : 0;
                    for (int i = 0; i < more; i++) {
                        consume(main, extra, "x" + i);
                    }
                } else if (dice < 94) {
                    op = "killed-writer";
                    killedWriter(target, rnd, s);
                } else {
                    op = "insert";
                    commitRows(target, rnd, s, 1 + rnd.nextInt(12), false);
                }
            } catch (Exception e) {
                op = "failed";
                notes.add("step " + step + ": " + e);
            }
            stats.merge(op, 1, Integer::sum);
            if (s.statistics && targetName.equals("main") && extra.nextInt(6) == 0) {
                try {
                    if (commitStatistics(main)) {
                        stats.merge("statistics", 1, Integer::sum);
                    }
                } catch (Exception e) {
                    notes.add("step " + step + " statistics: " + e);
                }
            }
        }
        // Every history gets consumers (consumer expiry runs on every seed): when none was
        // made among the steps, one to three streaming reads now.
        if (!consumerMade && extras) {
            int n = 1 + extra.nextInt(3);
            for (int i = 0; i < n; i++) {
                try {
                    consume(main, extra, "y" + i);
                    stats.merge("consumer", 1, Integer::sum);
                } catch (Exception e) {
                    notes.add("consumer y" + i + ": " + e);
                }
            }
        }
        // A decoupled changelog lifecycle: Java's own expiry keeps changelogs longer than
        // snapshots, leaving long-lived changelog files behind.
        boolean decouple =
                decoupled.equals("all")
                        || (decoupled.equals("none-only") && s.changelogProducer.equals("none"));
        if (s.pk && rnd.nextBoolean() && decouple) {
            Long latest = main.snapshotManager().latestSnapshotId();
            if (latest != null && latest > 6) {
                int keep = (int) (latest / 2);
                int expired =
                        open(io, dir)
                                .newExpireSnapshots()
                                .config(
                                        ExpireConfig.builder()
                                                .snapshotRetainMin(1)
                                                .snapshotRetainMax(keep)
                                                .changelogRetainMin(1)
                                                .changelogRetainMax(keep + 3 + rnd.nextInt(5))
                                                .build())
                                .expire();
                stats.put("decoupled-expiry", expired);
            }
        }
        ObjectNode reply = JSON.createObjectNode();
        reply.set("shape", s.json());
        ObjectNode st = reply.putObject("stats");
        stats.forEach(st::put);
        ArrayNode t = reply.putArray("tags");
        tags.forEach(t::add);
        ArrayNode b = reply.putArray("branches");
        branches.forEach(b::add);
        ArrayNode n = reply.putArray("notes");
        notes.forEach(n::add);
        return reply;
    }

    private static void commitRows(
            FileStoreTable table, Random rnd, Shape s, int rows, boolean delete)
            throws Exception {
        BatchWriteBuilder wb = table.newBatchWriteBuilder();
        try (BatchTableWrite w = wb.newWrite().withIOManager(ioManager());
                BatchTableCommit c = wb.newCommit()) {
            Object[] part = partition(rnd, s);
            for (int i = 0; i < rows; i++) {
                if (rnd.nextInt(3) == 0) {
                    part = partition(rnd, s);
                }
                w.write(
                        row(
                                rnd,
                                s,
                                delete ? RowKind.DELETE : RowKind.INSERT,
                                (String) part[0],
                                (Integer) part[1]));
            }
            c.commit(w.prepareCommit());
        }
    }

    private static void compact(FileStoreTable table, Random rnd, boolean full) throws Exception {
        List<BinaryRow> parts = table.newReadBuilder().newScan().listPartitions();
        if (parts.isEmpty()) {
            return;
        }
        BatchWriteBuilder wb = table.newBatchWriteBuilder();
        int bucket = table.coreOptions().bucket();
        try (BatchTableWrite w = wb.newWrite().withIOManager(ioManager());
                BatchTableCommit c = wb.newCommit()) {
            int n = 1 + rnd.nextInt(parts.size());
            for (int i = 0; i < n; i++) {
                w.compact(parts.get(rnd.nextInt(parts.size())), rnd.nextInt(bucket), full);
            }
            c.commit(w.prepareCommit());
        }
    }

    private static Map<String, String> spec(Random rnd, FileStoreTable table) {
        Map<String, String> spec = new LinkedHashMap<>();
        List<String> keys = table.partitionKeys();
        spec.put(keys.get(0), P1_SPEC_VALUES[rnd.nextInt(P1_SPEC_VALUES.length)]);
        if (keys.size() > 1 && rnd.nextBoolean()) {
            spec.put(keys.get(1), String.valueOf(P2_VALUES[1 + rnd.nextInt(3)]));
        }
        return spec;
    }

    private static void overwrite(FileStoreTable table, Random rnd, Shape s, boolean partition)
            throws Exception {
        Map<String, String> spec = partition ? spec(rnd, table) : Collections.emptyMap();
        BatchWriteBuilder wb = table.newBatchWriteBuilder().withOverwrite(spec);
        try (BatchTableWrite w = wb.newWrite().withIOManager(ioManager());
                BatchTableCommit c = wb.newCommit()) {
            int rows = 1 + rnd.nextInt(6);
            for (int i = 0; i < rows; i++) {
                Object[] part = partition(rnd, s);
                String p1 = spec.containsKey("p1") ? spec.get("p1") : (String) part[0];
                Integer p2 =
                        spec.containsKey("p2")
                                ? Integer.valueOf(spec.get("p2"))
                                : (Integer) part[1];
                w.write(row(rnd, s, RowKind.INSERT, p1, p2));
            }
            c.commit(w.prepareCommit());
        }
    }

    private static void dropPartition(FileStoreTable table, Random rnd) throws Exception {
        BatchWriteBuilder wb = table.newBatchWriteBuilder();
        try (BatchTableCommit c = wb.newCommit()) {
            c.truncatePartitions(Collections.singletonList(spec(rnd, table)));
        }
    }

    private static void consume(FileStoreTable table, Random rnd, String id) throws Exception {
        Map<String, String> opts = new HashMap<>();
        opts.put("consumer-id", id);
        FileStoreTable t = table.copy(opts);
        StreamTableScan scan = t.newReadBuilder().newStreamScan();
        int plans = 1 + rnd.nextInt(3);
        for (int i = 0; i < plans; i++) {
            scan.plan();
        }
        Long next = scan.checkpoint();
        if (next != null) {
            scan.notifyCheckpointComplete(next);
        }
    }

    /** An ANALYZE commit: statistics of the latest snapshot in a statistics file. */
    private static boolean commitStatistics(FileStoreTable table) throws Exception {
        Snapshot latest = table.snapshotManager().latestSnapshot();
        if (latest == null) {
            return false;
        }
        org.apache.paimon.stats.Statistics st =
                new org.apache.paimon.stats.Statistics(
                        latest.id(),
                        latest.schemaId(),
                        latest.totalRecordCount(),
                        1000L + latest.id());
        try (org.apache.paimon.operation.FileStoreCommit c =
                table.store().newCommit("stats-" + latest.id(), table)) {
            c.commitStatistics(st, BatchWriteBuilder.COMMIT_IDENTIFIER);
        }
        return true;
    }

    /** Writes files and never commits them, as a writer killed before its commit. */
    private static void killedWriter(FileStoreTable table, Random rnd, Shape s) throws Exception {
        BatchWriteBuilder wb = table.newBatchWriteBuilder();
        BatchTableWrite w = wb.newWrite().withIOManager(ioManager());
        Object[] part = partition(rnd, s);
        int rows = 1 + rnd.nextInt(6);
        for (int i = 0; i < rows; i++) {
            w.write(row(rnd, s, RowKind.INSERT, (String) part[0], (Integer) part[1]));
        }
        // The files are on disk now; closing the writer would delete them, committing would
        // reference them: do neither.
        List<CommitMessage> ignored = w.prepareCommit();
        if (ignored == null) {
            throw new IllegalStateException("no commit messages");
        }
    }

    // ---------------------------------------------------------------- read

    private static List<Long> ids(File dir, String prefix) {
        List<Long> ids = new ArrayList<>();
        String[] names = dir.list();
        if (names == null) {
            return ids;
        }
        for (String n : names) {
            if (n.startsWith(prefix)) {
                try {
                    ids.add(Long.parseLong(n.substring(prefix.length())));
                } catch (NumberFormatException ignored) {
                    // not a version file
                }
            }
        }
        Collections.sort(ids);
        return ids;
    }

    private static List<String> names(File dir, String prefix) {
        List<String> out = new ArrayList<>();
        String[] names = dir.list();
        if (names != null) {
            for (String n : names) {
                if (n.startsWith(prefix) && new File(dir, n).isFile()) {
                    out.add(n.substring(prefix.length()));
                }
            }
        }
        Collections.sort(out);
        return out;
    }

    /**
     * The digest of the rows of a read plan, by the plan's fingerprint (the data and deletion
     * files it reads, relative to the table, with their sizes), for the tables of the seed being
     * run. Data and deletion files never change once written, so a plan whose files are all on
     * disk with the same sizes reads the rows an identical plan read before.
     */
    private static final Map<String, ObjectNode> ROWS_BY_PLAN = new HashMap<>();

    private static ObjectNode read(String dir, boolean full) throws Exception {
        LocalFileIO io = LocalFileIO.create();
        FileStoreTable main = open(io, dir);
        // Manifests read once per request: nothing changes the table during one read.
        org.apache.paimon.utils.SegmentsCache<Path> manifests =
                org.apache.paimon.utils.SegmentsCache.create(
                        org.apache.paimon.options.MemorySize.ofMebiBytes(256), Long.MAX_VALUE);
        main.setManifestCache(manifests);
        ObjectNode versions = JSON.createObjectNode();
        ReadCtx ctx = new ReadCtx(new File(dir).toURI().getPath(), full);
        readBranch(main, new File(dir), "main", versions, ctx);
        File branchDir = new File(dir, "branch");
        String[] bs = branchDir.list();
        if (bs != null) {
            java.util.Arrays.sort(bs);
            for (String b : bs) {
                if (b.startsWith("branch-")) {
                    String name = b.substring("branch-".length());
                    FileStoreTable bt = main.switchToBranch(name);
                    bt.setManifestCache(manifests);
                    readBranch(
                            bt,
                            new File(branchDir, b),
                            name,
                            versions,
                            ctx);
                }
            }
        }
        ObjectNode reply = JSON.createObjectNode();
        reply.set("versions", versions);
        reply.put("planned", ctx.planned);
        reply.put("read_in_full", ctx.readInFull);
        return reply;
    }

    /** What one read request shares: the table root, whether to skip the plan cache, counts. */
    private static final class ReadCtx {
        final String root;
        final boolean full;
        int planned;
        int readInFull;

        ReadCtx(String root, boolean full) {
            this.root = root.endsWith("/") ? root : root + "/";
            this.full = full;
        }

        /** A path (URI or absolute) relative to the table root. */
        String rel(String path) {
            String p = path.startsWith("file:") ? new Path(path).toUri().getPath() : path;
            return p.startsWith(root) ? p.substring(root.length()) : p;
        }
    }

    /**
     * The fingerprint of a plan: every data file and deletion file it reads, relative to the
     * table, with its size; null when one of them is not on disk with that size (the plan must
     * then be read, and its error reported).
     */
    private static String fingerprint(List<Split> splits, long schemaId, ReadCtx ctx)
            throws Exception {
        List<String> parts = new ArrayList<>();
        parts.add("schema " + schemaId);
        for (Split split : splits) {
            if (!(split instanceof org.apache.paimon.table.source.DataSplit)) {
                return null;
            }
            org.apache.paimon.table.source.DataSplit ds =
                    (org.apache.paimon.table.source.DataSplit) split;
            for (org.apache.paimon.io.DataFileMeta f : ds.dataFiles()) {
                String path =
                        f.externalPath().orElse(ds.bucketPath() + "/" + f.fileName());
                File file = new File(new Path(path).toUri().getPath());
                if (!file.isFile() || file.length() != f.fileSize()) {
                    return null;
                }
                parts.add("data " + ctx.rel(path) + " " + f.fileSize());
            }
            if (ds.deletionFiles().isPresent()) {
                for (org.apache.paimon.table.source.DeletionFile d : ds.deletionFiles().get()) {
                    if (d == null) {
                        parts.add("dv none");
                        continue;
                    }
                    File file = new File(new Path(d.path()).toUri().getPath());
                    if (!file.isFile() || file.length() < d.offset() + d.length()) {
                        return null;
                    }
                    parts.add("dv " + ctx.rel(d.path()) + " " + d.offset() + " " + d.length());
                }
            }
        }
        Collections.sort(parts);
        return String.join("\n", parts);
    }

    private static void readBranch(
            FileStoreTable table, File root, String branch, ObjectNode out, ReadCtx ctx) {
        for (long id : ids(new File(root, "snapshot"), "snapshot-")) {
            ObjectNode n;
            try {
                n = digest(table, table.snapshotManager().snapshot(id), ctx);
            } catch (Throwable e) {
                n = JSON.createObjectNode().put("error", String.valueOf(e));
            }
            out.set(branch + ":snapshot:" + id, n);
        }
        for (String tag : names(new File(root, "tag"), "tag-")) {
            ObjectNode n;
            try {
                n = digest(table, table.tagManager().getOrThrow(tag).trimToSnapshot(), ctx);
            } catch (Throwable e) {
                n = JSON.createObjectNode().put("error", String.valueOf(e));
            }
            out.set(branch + ":tag:" + tag, n);
        }
    }

    /**
     * The row count and a hash of the sorted rows of one version (null: the latest). Every
     * version is planned from its snapshot, manifest list and manifests; with a context, a plan
     * whose files an identical plan of this seed already read in full reuses that digest.
     */
    private static ObjectNode digest(FileStoreTable t, Snapshot snapshot, ReadCtx ctx) {
        ObjectNode n = JSON.createObjectNode();
        try {
            List<Split> splits =
                    snapshot == null
                            ? t.newReadBuilder().newScan().plan().splits()
                            : t.newSnapshotReader().withSnapshot(snapshot).read().splits();
            String key = null;
            if (ctx != null) {
                ctx.planned++;
                if (!ctx.full && snapshot != null) {
                    key = fingerprint(splits, snapshot.schemaId(), ctx);
                    ObjectNode known = key == null ? null : ROWS_BY_PLAN.get(key);
                    if (known != null) {
                        return known.deepCopy();
                    }
                }
                ctx.readInFull++;
            }
            List<String> rows = new ArrayList<>();
            InternalRow.FieldGetter[] getters =
                    new InternalRow.FieldGetter[t.rowType().getFieldCount()];
            for (int i = 0; i < getters.length; i++) {
                getters[i] = InternalRow.createFieldGetter(t.rowType().getTypeAt(i), i);
            }
            try (RecordReader<InternalRow> r = t.newReadBuilder().newRead().createReader(splits)) {
                r.forEachRemaining(
                        row -> {
                            StringBuilder sb = new StringBuilder(row.getRowKind().shortString());
                            for (InternalRow.FieldGetter g : getters) {
                                sb.append('|').append(g.getFieldOrNull(row));
                            }
                            rows.add(sb.toString());
                        });
            }
            Collections.sort(rows);
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String r : rows) {
                md.update(r.getBytes(StandardCharsets.UTF_8));
                md.update((byte) '\n');
            }
            StringBuilder hex = new StringBuilder();
            for (byte x : md.digest()) {
                hex.append(String.format("%02x", x));
            }
            n.put("rows", rows.size());
            n.put("hash", hex.toString());
            if (key != null) {
                ROWS_BY_PLAN.put(key, n.deepCopy());
            }
        } catch (Throwable e) {
            n.put("error", String.valueOf(e));
        }
        return n;
    }

    // ---------------------------------------------------------------- clean

    private static ExpireConfig expireConfig(JsonNode st) {
        long now = System.currentTimeMillis();
        ExpireConfig.Builder b = ExpireConfig.builder();
        b.snapshotRetainMin(st.path("retain_min").asInt(1));
        b.snapshotRetainMax(st.path("retain_max").asInt(Integer.MAX_VALUE));
        b.snapshotMaxDeletes(st.path("max_deletes").asInt(Integer.MAX_VALUE));
        // An absolute cut-off (epoch ms), as the procedures turn older_than into a duration.
        JsonNode cut = st.get("older_than_ms");
        b.snapshotTimeRetain(
                cut == null || cut.isNull()
                        ? Duration.ofDays(36500)
                        : Duration.ofMillis(now - cut.asLong()));
        if (st.has("changelog_retain_min")) {
            b.changelogRetainMin(st.path("changelog_retain_min").asInt());
        }
        if (st.has("changelog_retain_max")) {
            b.changelogRetainMax(st.path("changelog_retain_max").asInt());
        }
        if (st.has("changelog_max_deletes")) {
            b.changelogMaxDeletes(st.path("changelog_max_deletes").asInt());
        }
        JsonNode ccut = st.get("changelog_older_than_ms");
        if (ccut != null && !ccut.isNull()) {
            b.changelogTimeRetain(Duration.ofMillis(now - ccut.asLong()));
        } else if (st.has("changelog_retain_min")) {
            b.changelogTimeRetain(Duration.ofDays(36500));
        }
        return b.build();
    }

    private static ObjectNode clean(String dir, String op, JsonNode st) throws Exception {
        RecordingFileIO io = new RecordingFileIO();
        FileStoreTable table = open(io, dir);
        ObjectNode reply = JSON.createObjectNode();
        switch (op) {
            case "expire-snapshots":
                reply.put("expired", table.newExpireSnapshots().config(expireConfig(st)).expire());
                break;
            case "expire-changelogs":
                reply.put("expired", table.newExpireChangelog().config(expireConfig(st)).expire());
                break;
            case "delete-tag":
                table.deleteTag(st.path("tag").asText());
                break;
            case "remove-orphan-files":
                {
                    CleanOrphanFilesResult r =
                            new LocalOrphanFilesClean(
                                            table,
                                            st.path("older_than_ms").asLong(),
                                            st.path("dry_run").asBoolean(false))
                                    .clean();
                    reply.put("count", r.getDeletedFileCount());
                    ArrayNode listed = reply.putArray("reported");
                    if (r.getDeletedFilesPath() != null) {
                        for (Path p : r.getDeletedFilesPath()) {
                            listed.add(p.toUri().getPath());
                        }
                    }
                    break;
                }
            case "expire-tags":
                {
                    // As Java's expire_tags procedure.
                    org.apache.paimon.tag.TagTimeExpire e =
                            table.store().newTagAutoManager(table).getTagTimeExpire();
                    if (e == null) {
                        throw new IllegalStateException("no TagTimeExpire for this table");
                    }
                    JsonNode cut = st.get("older_than_ms");
                    if (cut != null && !cut.isNull()) {
                        e.withOlderThanTime(localTime(cut.asLong()));
                    }
                    ArrayNode names = reply.putArray("expired_tags");
                    e.expire().forEach(names::add);
                    break;
                }
            case "expire-consumers":
                {
                    // As the expiry at commit: consumers not advanced for the expiration time.
                    long ms = st.path("expiration_ms").asLong();
                    new org.apache.paimon.consumer.ConsumerManager(io, table.location())
                            .expire(LocalDateTime.now().minus(Duration.ofMillis(ms)));
                    break;
                }
            case "expire-partitions":
                {
                    // Partition expiry by update time, the cut-off given as an epoch-ms time.
                    long cut = st.path("cutoff_ms").asLong();
                    Map<String, String> o = new HashMap<>();
                    o.put("partition.expiration-strategy", "update-time");
                    o.put("partition.expiration-check-interval", "1 ms");
                    o.put(
                            "partition.expiration-time",
                            Math.max(1, System.currentTimeMillis() - cut) + " ms");
                    FileStoreTable t = table.copy(o);
                    org.apache.paimon.operation.PartitionExpire pe =
                            t.store().newPartitionExpire("partition-expire", t);
                    if (pe == null) {
                        throw new IllegalStateException("no PartitionExpire for this table");
                    }
                    Thread.sleep(5);
                    List<Map<String, String>> dropped = pe.expire(BatchWriteBuilder.COMMIT_IDENTIFIER);
                    ArrayNode parts = reply.putArray("dropped");
                    if (dropped != null) {
                        dropped.forEach(d -> parts.add(String.valueOf(new TreeMap<>(d))));
                    }
                    break;
                }
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
        ArrayNode deleted = reply.putArray("deleted");
        for (String[] d : io.deleted()) {
            ObjectNode e = deleted.addObject();
            e.put("path", d[0]);
            e.put("kind", d[1]);
        }
        return reply;
    }

    private static LocalDateTime localTime(long epochMs) {
        return LocalDateTime.ofInstant(Instant.ofEpochMilli(epochMs), ZoneId.systemDefault());
    }

    /**
     * The times the test places its cut-offs between: each main-branch tag's creation time and
     * each partition's last file creation time (what update-time partition expiry compares),
     * epoch ms in the system time zone, as Java compares them.
     */
    private static ObjectNode times(String dir) throws Exception {
        FileStoreTable table = open(LocalFileIO.create(), dir);
        ObjectNode reply = JSON.createObjectNode();
        ObjectNode tags = reply.putObject("tags");
        for (Map.Entry<String, org.apache.paimon.tag.Tag> e :
                tagsByName(table).entrySet()) {
            LocalDateTime t = e.getValue().getTagCreateTime();
            if (t != null) {
                tags.put(e.getKey(), t.atZone(ZoneId.systemDefault()).toInstant().toEpochMilli());
            }
        }
        ArrayNode parts = reply.putArray("partitions");
        if (!table.partitionKeys().isEmpty() && table.snapshotManager().latestSnapshot() != null) {
            for (org.apache.paimon.manifest.PartitionEntry p :
                    table.newSnapshotReader().partitionEntries()) {
                parts.add(p.lastFileCreationTime());
            }
        }
        return reply;
    }

    private static Map<String, org.apache.paimon.tag.Tag> tagsByName(FileStoreTable table) {
        Map<String, org.apache.paimon.tag.Tag> out = new TreeMap<>();
        for (String name : table.tagManager().allTagNames()) {
            out.put(name, table.tagManager().getOrThrow(name));
        }
        return out;
    }

    // ---------------------------------------------------------------- commit-and-expire

    private static ObjectNode commitAndExpire(String dir, long seed) throws Exception {
        Random rnd = new Random(seed);
        LocalFileIO io = LocalFileIO.create();
        Map<String, String> opts = new HashMap<>();
        opts.put("snapshot.num-retained.min", "1");
        opts.put("snapshot.num-retained.max", "2");
        opts.put("snapshot.time-retained", "1 ms");
        FileStoreTable table = open(io, dir).copy(opts);
        Shape s = new Shape();
        s.pk = !table.primaryKeys().isEmpty();
        s.partitionKeys = table.partitionKeys().size();
        BatchWriteBuilder wb = table.newBatchWriteBuilder();
        try (BatchTableWrite w = wb.newWrite().withIOManager(ioManager());
                BatchTableCommit c = wb.newCommit()) {
            Object[] part = partition(rnd, s);
            w.write(row(rnd, s, RowKind.INSERT, (String) part[0], (Integer) part[1]));
            c.commit(w.prepareCommit());
        }
        int expired =
                table.newExpireSnapshots()
                        .config(
                                ExpireConfig.builder()
                                        .snapshotRetainMin(1)
                                        .snapshotRetainMax(2)
                                        .build())
                        .expire();
        ObjectNode reply = JSON.createObjectNode();
        reply.put("expired", expired);
        reply.put("latest", table.snapshotManager().latestSnapshotId());
        ObjectNode latest = digest(open(io, dir), null, null);
        reply.set("latest_read", latest);
        if (latest.has("error")) {
            throw new IllegalStateException("reading the latest snapshot: " + latest);
        }
        return reply;
    }
}
