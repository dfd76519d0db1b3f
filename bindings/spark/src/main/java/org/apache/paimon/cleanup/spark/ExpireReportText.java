package org.apache.paimon.cleanup.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.cleanup.FileClass;
import org.apache.paimon.cleanup.Report;

/**
 * The report of a snapshot expiry as the CLI's {@code expire-snapshots} prints it, made from the
 * library's JSON document of the report (Jackson comes with Spark).
 */
final class ExpireReportText {
    private ExpireReportText() {}

    /**
     * The report of a snapshot expiry as the CLI's {@code expire-snapshots} prints it.
     *
     * @param json the report's JSON document ({@code Report.json()})
     * @param asJson print the document itself ({@code --json}) instead of the text
     * @return the lines to print, each ending with a newline
     */
    static String renderExpiry(String json, boolean asJson) {
        if (asJson) {
            return json.endsWith("\n") ? json : json + "\n";
        }
        JsonNode r = tree(json);
        JsonNode d = r.path("deletion");
        boolean dryRun = d.path("dry_run").asBoolean();
        StringBuilder out = new StringBuilder();
        JsonNode first = r.path("first_expired");
        JsonNode last = r.path("last_expired");
        if (first.isNumber() && last.isNumber()) {
            out.append(String.format("%s %d snapshots (%d..=%d)%n", dryRun ? "would expire" : "expired",
                    r.path("snapshots_expired").asLong(), first.asLong(), last.asLong()));
        } else {
            out.append("nothing to expire\n");
        }
        deletion(d, out);
        if (dryRun) {
            for (JsonNode p : d.path("paths")) {
                out.append("  would delete ").append(p.path("path").asText()).append('\n');
            }
        }
        return out.toString();
    }

    /** Paths a summary prints (or lists in its JSON document) before pointing at the file. */
    static final int SAMPLE = 20;

    /**
     * The report of a sharded snapshot expiry whose paths went to the tasks' files: the CLI's
     * lines (or a JSON document) with the counts, the first {@link #SAMPLE} paths of the report
     * and where the paths are, made from the report's counts without decoding its JSON document.
     *
     * @param report the run's report (counts only: it lists the driver's own deletions and a
     *     sample of the tasks')
     * @param sample its first paths, at most {@link #SAMPLE}
     * @param pathsFile the driver's listing (every path its report lists)
     * @param pathsDir the directory of the tasks' listings and the driver's
     * @param asJson print a JSON document instead of the text
     * @return the lines to print, each ending with a newline
     */
    static String renderSummary(Report report, List<String> sample, String pathsFile, String pathsDir,
            boolean asJson) {
        if (asJson) {
            ObjectMapper m = new ObjectMapper();
            ObjectNode r = m.createObjectNode();
            r.put("kind", report.kind().label());
            r.put("dry_run", report.dryRun());
            r.put("snapshots_expired", report.expiredCount());
            if (report.hasExpiredRange()) {
                r.put("first_expired", report.firstExpiredId());
                r.put("last_expired", report.lastExpiredId());
            }
            if (report.earliestAfter() != null) {
                r.put("earliest_after", report.earliestAfter().longValue());
            }
            ObjectNode deleted = r.putObject("deleted");
            for (FileClass c : report.classes()) {
                ObjectNode n = deleted.putObject(c.label());
                n.put("files", report.files(c));
                n.put("bytes", report.bytes(c));
            }
            r.put("total_files", report.totalFiles());
            r.put("total_bytes", report.totalBytes());
            r.put("dirs_removed", report.dirsRemoved());
            ArrayNode failed = r.putArray("failed");
            for (Report.FailedDeletion f : report.failures()) {
                failed.addObject().put("path", f.path()).put("error", f.error());
            }
            r.put("paths_elsewhere", true);
            r.put("paths_dir", pathsDir);
            r.put("path_count", report.pathCount());
            r.put("paths_file", pathsFile);
            ArrayNode s = r.putArray("sample_paths");
            for (String p : sample) {
                s.add(p);
            }
            try {
                return m.writeValueAsString(r) + "\n";
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the summary as JSON", e);
            }
        }
        StringBuilder out = new StringBuilder();
        boolean dryRun = report.dryRun();
        if (report.hasExpiredRange()) {
            out.append(String.format("%s %d snapshots (%d..=%d)%n", dryRun ? "would expire" : "expired",
                    report.expiredCount(), report.firstExpiredId(), report.lastExpiredId()));
        } else {
            out.append("nothing to expire\n");
        }
        for (FileClass c : report.classes()) {
            out.append(String.format("  %-16s %8d files %14d bytes%n", ReportText.className(c.label()),
                    report.files(c), report.bytes(c)));
        }
        if (report.dirsRemoved() > 0) {
            out.append("  directories removed: ").append(report.dirsRemoved()).append('\n');
        }
        for (Report.FailedDeletion f : report.failures()) {
            out.append("  FAILED ").append(f.path()).append(": ").append(f.error()).append('\n');
        }
        for (String p : sample) {
            out.append(dryRun ? "  would delete " : "  deleted ").append(p).append('\n');
        }
        out.append(String.format("  %d paths the driver %s listed in %s; the tasks' paths in %s%n",
                report.pathCount(), dryRun ? "would delete or sampled" : "deleted or sampled", pathsFile,
                pathsDir + "/{shard,unit}-*.txt"));
        return out.toString();
    }

    private static JsonNode tree(String json) {
        try {
            return new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException("the library's report is not JSON", e);
        }
    }

    /** The CLI's lines of a deletion: the classes, the directories removed, the failures. */
    private static void deletion(JsonNode d, StringBuilder out) {
        // The CLI lists the classes in the library's order (FileClass), the document by name.
        List<Map.Entry<String, JsonNode>> classes = new ArrayList<>(d.path("deleted").properties());
        classes.sort(Comparator.comparingInt(c -> ReportText.classOrder(c.getKey())));
        for (Map.Entry<String, JsonNode> c : classes) {
            out.append(String.format("  %-16s %8d files %14d bytes%n", ReportText.className(c.getKey()),
                    c.getValue().path("files").asLong(), c.getValue().path("bytes").asLong()));
        }
        long dirs = d.path("dirs_removed").asLong();
        if (dirs > 0) {
            out.append("  directories removed: ").append(dirs).append('\n');
        }
        for (JsonNode f : d.path("failed")) {
            out.append("  FAILED ").append(f.path("path").asText()).append(": ")
                    .append(f.path("error").asText()).append('\n');
        }
    }
}
