package org.apache.paimon.cleanup.flink;

import java.util.ArrayList;
import java.util.List;

/**
 * The jobs' command lines (with the library's {@code --older-than} parser: run with the native
 * library, {@code -Dpaimon.cleanup.jni.library=...}) and the text rendering of their reports.
 * Plain Java, no Flink job: {@code java -cp ... org.apache.paimon.cleanup.flink.JobArgsTest}
 * prints {@code N passed, M failed} and exits non-zero on a failure.
 */
public final class JobArgsTest {
    private static int passed;
    private static final List<String> failures = new ArrayList<>();

    private JobArgsTest() {}

    private static void check(String name, boolean ok) {
        if (ok) {
            passed++;
        } else {
            failures.add(name);
            System.err.println("FAILED: " + name);
        }
    }

    private static void eq(String name, long want, long got) {
        check(name + " (want " + want + ", got " + got + ")", want == got);
    }

    private static void refused(String name, Runnable r) {
        try {
            r.run();
            check(name + " was accepted", false);
        } catch (IllegalArgumentException e) {
            passed++;
        }
    }

    /** @param argv unused */
    public static void main(String[] argv) {
        NativeLibrary.prepareMain(null);
        long utc2024 = 1_704_067_200_000L; // 2024-01-01T00:00:00Z
        long now = utc2024 + 86_400_000L;

        // RemoveOrphanFiles
        JobArgs a = JobArgs.parse(new String[] {"s3://b/t", "-o", "s3.endpoint=http://x:1",
            "--option=a=b=c", "--older-than", "1 d", "--dry-run", "--parallelism", "8", "--json",
            "--no-writers-running", "--external-roots-owned", "--native-library", "/x/lib.so"}, now);
        check("table", "s3://b/t".equals(a.table));
        check("options", "http://x:1".equals(a.options.get("s3.endpoint"))
                && "b=c".equals(a.options.get("a")) && a.options.size() == 2);
        eq("cut-off of '1 d' (the library's parser)", utc2024, a.cutoffMs(now).longValue());
        check("flags", a.dryRun && a.json && a.noWritersRunning && a.externalRootsOwned);
        eq("parallelism", 8, a.parallelism);
        check("native library", "/x/lib.so".equals(a.nativeLibrary));
        JobArgs b = JobArgs.parse(new String[] {"/t"}, now);
        check("defaults", b.cutoffMs(now) == null && !b.dryRun && !b.json && b.parallelism == 0
                && b.options.isEmpty() && b.nativeLibrary == null);
        eq("--older-than-ms", 5L, JobArgs.parse(new String[] {"/t", "--older-than-ms", "5"}, now)
                .cutoffMs(now).longValue());
        eq("--older-than=TEXT with a zone", utc2024,
                JobArgs.parse(new String[] {"/t", "--older-than=2024-01-01 00:00:00Z"}, now).cutoffMs(now));
        check("--help", JobArgs.parse(new String[] {"--help"}, now).help);
        refused("no table", () -> JobArgs.parse(new String[] {"--dry-run"}, now));
        refused("two tables", () -> JobArgs.parse(new String[] {"/a", "/b"}, now));
        refused("unknown flag", () -> JobArgs.parse(new String[] {"/t", "--retain-max", "3"}, now));
        refused("-o without =", () -> JobArgs.parse(new String[] {"/t", "-o", "novalue"}, now));
        refused("-o without value", () -> JobArgs.parse(new String[] {"/t", "-o"}, now));
        refused("both cut-offs", () -> JobArgs.parse(
                new String[] {"/t", "--older-than", "1 d", "--older-than-ms", "1"}, now));
        refused("--older-than-ms in the future", () -> JobArgs.parse(
                new String[] {"/t", "--older-than-ms", Long.toString(now + 1)}, now));
        refused("--older-than-ms not a number",
                () -> JobArgs.parse(new String[] {"/t", "--older-than-ms", "1d"}, now));
        refused("--parallelism 0", () -> JobArgs.parse(new String[] {"/t", "--parallelism", "0"}, now));
        refused("--parallelism x", () -> JobArgs.parse(new String[] {"/t", "--parallelism", "x"}, now));
        for (String bad : new String[] {"", "1700000000000", "yesterday", "2024-01-03 00:00:00Z",
                "2024-02-30"}) {
            refused("older-than '" + bad + "'",
                    () -> JobArgs.parse(new String[] {"/t", "--older-than", bad}, now).cutoffMs(now));
        }

        // ExpireSnapshots
        ExpireArgs e = ExpireArgs.parse(new String[] {"/t", "--branch", "b", "--retain-min", "2",
            "--retain-max=5", "--max-deletes", "3", "--clean-empty-dirs", "--refuse-if-tags-pin",
            "--dry-run", "--json", "-o", "k=v"}, now);
        e.resolve(now);
        check("expire: fields", "/t".equals(e.table) && "b".equals(e.branch)
                && e.retainMin == 2L && e.retainMax == 5L && e.maxDeletes == 3L && e.cleanEmptyDirs
                && e.refuseIfTagsPin && e.dryRun && e.json && "v".equals(e.options.get("k"))
                && e.cutoffMs == null && e.timeRetainedMs == null);
        ExpireArgs tr = ExpireArgs.parse(new String[] {"/t", "--time-retained", "30 min"}, now);
        tr.resolve(now);
        eq("expire: --time-retained 30 min", 1_800_000L, tr.timeRetainedMs.longValue());
        ExpireArgs ot = ExpireArgs.parse(new String[] {"/t", "--older-than", "1 d"}, now);
        ot.resolve(now);
        eq("expire: --older-than 1 d", utc2024, ot.cutoffMs.longValue());
        refused("expire: two cut-offs", () -> ExpireArgs.parse(
                new String[] {"/t", "--time-retained", "1 h", "--older-than-ms", "1"}, now));
        refused("expire: --time-retained timestamp",
                () -> ExpireArgs.parse(new String[] {"/t", "--time-retained", "2024-01-01"}, now));
        refused("expire: --retain-min x",
                () -> ExpireArgs.parse(new String[] {"/t", "--retain-min", "x"}, now));
        refused("expire: unknown flag",
                () -> ExpireArgs.parse(new String[] {"/t", "--shards", "2"}, now));
        eq("expire: --parallelism 2", 2,
                ExpireArgs.parse(new String[] {"/t", "--parallelism", "2"}, now).parallelism);

        // the text reports, from report documents as the library writes them
        String doc = "{\"older_than_ms\":5,\"files_listed\":9,\"candidates\":4,\"referenced\":1,"
                + "\"vetoed\":0,\"kept_name_referenced_elsewhere\":[\"x/k\"],\"deletion\":{"
                + "\"dry_run\":true,\"deleted\":{\"manifest_list\":{\"files\":1,\"bytes\":7},"
                + "\"data\":{\"files\":2,\"bytes\":30}},\"failed\":[],\"dirs_removed\":0,"
                + "\"paths\":[{\"class\":\"data\",\"path\":\"p=1/bucket-0/d\"}]},"
                + "\"branches_without_schema\":[],\"skipped\":[\"ext: not owned\"]}";
        String want = "would delete 3 orphan files (37 bytes); 4 candidates: 1 referenced (any age), "
                + "0 vetoed, the others older than " + ReportText.readableMs(5) + " (5 ms)\n"
                + "  Data                    2 files             30 bytes\n"
                + "  ManifestList            1 files              7 bytes\n"
                + "  kept (its name is referenced at another location): x/k\n"
                + "  not listed: ext: not owned\n"
                + "  would delete p=1/bucket-0/d\n";
        check("readable time", ReportText.readableMs(5).matches(
                "19(69|70)-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} [+-][0-9]{2}:[0-9]{2}"));
        String got = ReportText.render(doc, false);
        check("text report:\n" + got, want.equals(got));
        check("json report", ReportText.render(doc, true).equals(doc + "\n"));
        String exp = "{\"snapshots_expired\":2,\"first_expired\":1,\"last_expired\":2,"
                + "\"earliest_after\":3,\"changelogs_written\":0,\"deletion\":{\"dry_run\":false,"
                + "\"deleted\":{\"snapshot_meta\":{\"files\":2,\"bytes\":900},\"data\":{\"files\":1,\"bytes\":10}},"
                + "\"failed\":[],\"dirs_removed\":1,\"paths\":[]},\"elapsed_ms\":3}";
        String wantExp = "expired 2 snapshots (1..=2)\n"
                + "  Data                    1 files             10 bytes\n"
                + "  SnapshotMeta            2 files            900 bytes\n"
                + "  directories removed: 1\n";
        String gotExp = ReportText.renderExpiry(exp, false);
        check("expiry text report:\n" + gotExp, wantExp.equals(gotExp));
        check("nothing to expire", ReportText.renderExpiry(
                "{\"snapshots_expired\":0,\"first_expired\":null,\"last_expired\":null,"
                        + "\"deletion\":{\"dry_run\":true,\"deleted\":{},\"failed\":[],\"paths\":[]}}",
                false).equals("nothing to expire\n"));

        System.out.println(passed + " passed, " + failures.size() + " failed");
        if (!failures.isEmpty()) {
            System.exit(1);
        }
    }
}
