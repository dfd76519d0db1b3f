package org.apache.paimon.cleanup.spark;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * The job's command line and its {@code --older-than} forms (the cases of the library's
 * {@code spec::time_text} tests, which the CLI uses), and the text rendering of a report. Plain
 * Java, no Spark context: {@code java -cp ... org.apache.paimon.cleanup.spark.JobArgsTest} prints
 * {@code N passed, M failed} and exits non-zero on a failure.
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

    private static JobArgs parse(long now, String... argv) {
        return JobArgs.parse(argv, now, ZoneOffset.UTC);
    }

    /** @param argv unused */
    public static void main(String[] argv) {
        ZoneId utc = ZoneOffset.UTC;
        long utc2024 = 1_704_067_200_000L; // 2024-01-01T00:00:00Z
        long now = utc2024 + 86_400_000L;

        // timestamps: Java's forms, one-digit fields, fractions, zones
        eq("date", utc2024, OlderThan.parse("2024-01-01", now, utc));
        eq("space form", utc2024 + 12 * 3_600_000L, OlderThan.parse("2024-01-01 12:00:00", now, utc));
        eq("one-digit fields + fraction", utc2024 + 86_400_000L + 3 * 3_600_000L + 4 * 60_000L + 5_120L,
                OlderThan.parse("2024-1-2 3:4:5.12", utc2024 + 2 * 86_400_000L, utc));
        eq("T form without seconds", utc2024 + 3_600_000L, OlderThan.parse("2024-01-01T01:00", now, utc));
        eq("nanosecond fraction truncates to ms", utc2024 + 5_000L,
                OlderThan.parse("2024-01-01T00:00:05.000000001", now, utc));
        eq("Z", utc2024, OlderThan.parse("2024-01-01 00:00:00Z", now, ZoneId.of("Asia/Tokyo")));
        eq("+08:00", utc2024, OlderThan.parse("2024-01-01T08:00+08:00", now, utc));
        eq("UTC word", utc2024, OlderThan.parse("2024-01-01 00:00:00 UTC", now, utc));
        eq("-0500", utc2024, OlderThan.parse("2023-12-31 19:00:00 -0500", now, utc));
        eq("padded", utc2024, OlderThan.parse(" 2024-01-01T00:00Z ", now, utc));
        eq("local zone", utc2024 - 9 * 3_600_000L,
                OlderThan.parse("2024-01-01 00:00:00", now, ZoneId.of("Asia/Tokyo")));
        // a local time that exists twice is the earlier instant (as chrono's earliest())
        eq("DST overlap: earlier instant", 1_698_539_400_000L, // 00:30Z, not 01:30Z
                OlderThan.parse("2023-10-29 02:30:00", now, ZoneId.of("Europe/Paris")));
        refused("DST gap", () -> OlderThan.parse("2024-03-31 02:30:00", now + 200L * 86_400_000L,
                ZoneId.of("Europe/Paris")));
        for (String bad : new String[] {"", "   ", "2024", "24-01-01", "2024-13-01", "2024-02-30",
                "2024-01-01 12:00", "2024-01-01 25:00:00", "2024-01-01T12", "2024-01-01 12:00:00x",
                "2024-01-01 12:00:00.1234567891", "2024-01-01 00:00:00 +25:00",
                "2024-01-01 00:00:00 Europe/Paris", "1700000000000", "yesterday",
                "2024-01-03 00:00:00Z", "1 fortnight", "99999999999999999999999 d"}) {
            refused("older-than '" + bad + "'", () -> OlderThan.parse(bad, now, utc));
        }

        // durations back from now
        eq("1 d", utc2024, OlderThan.parse("1 d", now, utc));
        eq("1d", utc2024, OlderThan.parse("1d", now, utc));
        eq("24 h", utc2024, OlderThan.parse("24 h", now, utc));
        eq("30 min", now - 1_800_000L, OlderThan.parse("30 min", now, utc));
        eq("90 s", now - 90_000L, OlderThan.parse("90 s", now, utc));
        eq("1500 ms", now - 1_500L, OlderThan.parse("1500 ms", now, utc));
        eq("2 DAYS", now - 2 * 86_400_000L, OlderThan.parse("2 DAYS", now, utc));
        eq("1500 us", now - 1L, OlderThan.parse("1500 us", now, utc));

        // the command line
        JobArgs a = parse(now, "s3://b/t", "-o", "s3.endpoint=http://x:1", "--option=a=b=c",
                "--older-than", "1 d", "--dry-run", "--parallelism", "8", "--json",
                "--no-writers-running", "--external-roots-owned");
        check("table", "s3://b/t".equals(a.table));
        check("options", "http://x:1".equals(a.options.get("s3.endpoint"))
                && "b=c".equals(a.options.get("a")) && a.options.size() == 2);
        eq("cut-off", utc2024, a.olderThanMs.longValue());
        check("flags", a.dryRun && a.json && a.noWritersRunning && a.externalRootsOwned);
        eq("parallelism", 8, a.parallelism);
        JobArgs b = parse(now, "/t");
        check("defaults", b.olderThanMs == null && !b.dryRun && !b.json && b.parallelism == 0
                && b.options.isEmpty());
        eq("--older-than-ms", 5L, parse(now, "/t", "--older-than-ms", "5").olderThanMs.longValue());
        eq("--older-than=TEXT", utc2024, parse(now, "/t", "--older-than=2024-01-01").olderThanMs);
        check("--help", parse(now, "--help").help);
        refused("no table", () -> parse(now, "--dry-run"));
        refused("two tables", () -> parse(now, "/a", "/b"));
        refused("unknown flag", () -> parse(now, "/t", "--retain-max", "3"));
        refused("-o without =", () -> parse(now, "/t", "-o", "novalue"));
        refused("-o without value", () -> parse(now, "/t", "-o"));
        refused("both cut-offs", () -> parse(now, "/t", "--older-than", "1 d", "--older-than-ms", "1"));
        refused("--older-than-ms in the future", () -> parse(now, "/t", "--older-than-ms",
                Long.toString(now + 1)));
        refused("--older-than-ms not a number", () -> parse(now, "/t", "--older-than-ms", "1d"));
        refused("--parallelism 0", () -> parse(now, "/t", "--parallelism", "0"));
        refused("--parallelism x", () -> parse(now, "/t", "--parallelism", "x"));
        eq("--shards", 64, parse(now, "/t", "--shards", "64").shards);
        eq("--shards=N", 65536, parse(now, "/t", "--shards=65536").shards);
        eq("default shards", 0, b.shards);
        refused("--shards 0", () -> parse(now, "/t", "--shards", "0"));
        refused("--shards too many", () -> parse(now, "/t", "--shards", "65537"));
        refused("--shards x", () -> parse(now, "/t", "--shards", "x"));

        // ExpireSnapshots' command line: --shards
        eq("expire --shards", 7, ExpireArgs.parse(new String[] {"/t", "--shards", "7"}, now).shards);
        eq("expire --shards=N", 65536, ExpireArgs.parse(new String[] {"/t", "--shards=65536"}, now).shards);
        eq("expire default shards", 0, ExpireArgs.parse(new String[] {"/t"}, now).shards);
        check("expire --shards with --parallelism", ExpireArgs.parse(
                new String[] {"/t", "--parallelism", "3", "--shards", "2"}, now).parallelism == 3);
        refused("expire --shards 0", () -> ExpireArgs.parse(new String[] {"/t", "--shards", "0"}, now));
        refused("expire --shards too many",
                () -> ExpireArgs.parse(new String[] {"/t", "--shards", "65537"}, now));
        refused("expire --shards x", () -> ExpireArgs.parse(new String[] {"/t", "--shards", "x"}, now));
        refused("expire --shards without value", () -> ExpireArgs.parse(new String[] {"/t", "--shards"}, now));
        // --report-dir: only with --shards (without, the job prints every path as today)
        check("expire --report-dir", "/r".equals(ExpireArgs.parse(
                new String[] {"/t", "--shards", "2", "--report-dir", "/r"}, now).reportDir));
        check("expire --report-dir=DIR", "/r".equals(ExpireArgs.parse(
                new String[] {"/t", "--report-dir=/r", "--shards=2"}, now).reportDir));
        check("expire default report dir", ExpireArgs.parse(new String[] {"/t"}, now).reportDir == null);
        refused("expire --report-dir without --shards",
                () -> ExpireArgs.parse(new String[] {"/t", "--report-dir", "/r"}, now));
        refused("expire --report-dir empty",
                () -> ExpireArgs.parse(new String[] {"/t", "--shards", "2", "--report-dir="}, now));

        // the text report, from a report document as the library writes it
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

        System.out.println(passed + " passed, " + failures.size() + " failed");
        if (!failures.isEmpty()) {
            System.exit(1);
        }
    }
}
