package org.apache.paimon.cleanup.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.cleanup.FileClass;

/**
 * The report as the CLI's {@code remove-orphan-files} prints it, made from the library's JSON
 * document of the report (the document the CLI prints with {@code --json}; Jackson comes with
 * Spark).
 */
final class ReportText {
    private ReportText() {}

    /**
     * @param json the report's JSON document ({@code Report.json()})
     * @param asJson print the document itself ({@code --json}) instead of the text
     * @return the lines to print, each ending with a newline
     */
    static String render(String json, boolean asJson) {
        if (asJson) {
            return json.endsWith("\n") ? json : json + "\n";
        }
        JsonNode r;
        try {
            r = new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException("the library's report is not JSON", e);
        }
        JsonNode d = r.path("deletion");
        boolean dryRun = d.path("dry_run").asBoolean();
        long files = 0;
        long bytes = 0;
        for (JsonNode c : d.path("deleted")) {
            files += c.path("files").asLong();
            bytes += c.path("bytes").asLong();
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format("%s %d orphan files (%d bytes); %d candidates: %d referenced "
                        + "(any age), %d vetoed, the others older than %s (%d ms)%n",
                dryRun ? "would delete" : "deleted", files, bytes, r.path("candidates").asLong(),
                r.path("referenced").asLong(), r.path("vetoed").asLong(),
                readableMs(r.path("older_than_ms").asLong()), r.path("older_than_ms").asLong()));
        // The CLI lists the classes in the library's order (FileClass), the document by name.
        List<Map.Entry<String, JsonNode>> classes = new ArrayList<>(d.path("deleted").properties());
        classes.sort(Comparator.comparingInt(c -> classOrder(c.getKey())));
        for (Map.Entry<String, JsonNode> c : classes) {
            out.append(String.format("  %-16s %8d files %14d bytes%n", className(c.getKey()),
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
        for (JsonNode p : r.path("kept_name_referenced_elsewhere")) {
            out.append("  kept (its name is referenced at another location): ")
                    .append(p.asText()).append('\n');
        }
        for (JsonNode b : r.path("branches_without_schema")) {
            out.append("  branch without schema (its versions still protect files): ")
                    .append(b.asText()).append('\n');
        }
        for (JsonNode s : r.path("skipped")) {
            out.append("  not listed: ").append(s.asText()).append('\n');
        }
        if (dryRun) {
            for (JsonNode p : d.path("paths")) {
                out.append("  would delete ").append(p.path("path").asText()).append('\n');
            }
        }
        return out.toString();
    }

    /**
     * An epoch-ms time as the CLI prints it: local date, time with milliseconds and the zone's
     * offset ({@code 2024-01-01 12:00:00.000 +02:00}).
     */
    static String readableMs(long ms) {
        return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS xxx")
                .format(Instant.ofEpochMilli(ms).atZone(ZoneId.systemDefault()));
    }

    /** The position of a class label in the library's order; unknown labels last. */
    static int classOrder(String label) {
        for (FileClass c : FileClass.values()) {
            if (c.label().equals(label)) {
                return c.ordinal();
            }
        }
        return Integer.MAX_VALUE;
    }

    /** {@code manifest_list} -> {@code ManifestList}: the CLI prints the class's Rust name. */
    static String className(String snake) {
        StringBuilder b = new StringBuilder();
        boolean upper = true;
        for (char ch : snake.toCharArray()) {
            if (ch == '_') {
                upper = true;
            } else {
                b.append(upper ? Character.toUpperCase(ch) : ch);
                upper = false;
            }
        }
        return b.toString();
    }
}
