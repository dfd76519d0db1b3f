package org.apache.paimon.cleanup.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

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
