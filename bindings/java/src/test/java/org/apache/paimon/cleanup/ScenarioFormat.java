package org.apache.paimon.cleanup;

import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * The canonical one-line JSON of a summary and of a report (bindings/SCENARIO.md), identical to
 * the C, C++ and Go runners' output.
 */
final class ScenarioFormat {
    private static final Charset UTF8 = Charset.forName("UTF-8");

    private ScenarioFormat() {}

    static String summary(TableSummary s) {
        return "{\"has_snapshots\":" + s.hasSnapshots() + ",\"earliest\":" + s.earliestSnapshotId()
                + ",\"latest\":" + s.latestSnapshotId() + ",\"snapshots\":" + s.snapshotCount()
                + ",\"tags\":" + s.tagCount() + ",\"branches\":" + s.branchCount()
                + ",\"live_files\":" + s.liveFileCount() + ",\"live_bytes\":" + s.liveFileBytes() + "}";
    }

    /** A JSON string: {@code "} and {@code \\} escaped, control characters as {@code \\u00XX}. */
    static String quote(String in) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < in.length(); i++) {
            char c = in.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String strings(List<String> items) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) {
            b.append(i == 0 ? "" : ",").append(quote(items.get(i)));
        }
        return b.append("]").toString();
    }

    /** FNV-1a 64 over the paths sorted by their UTF-8 bytes, each followed by '\n'. */
    static String pathsFnv1a(List<String> paths) {
        List<byte[]> sorted = new ArrayList<byte[]>();
        for (String p : paths) {
            sorted.add(p.getBytes(UTF8));
        }
        Collections.sort(sorted, new Comparator<byte[]>() {
            @Override
            public int compare(byte[] a, byte[] b) {
                for (int i = 0; i < Math.min(a.length, b.length); i++) {
                    int d = (a[i] & 0xff) - (b[i] & 0xff);
                    if (d != 0) {
                        return d;
                    }
                }
                return a.length - b.length;
            }
        });
        long h = 0xcbf29ce484222325L;
        for (byte[] p : sorted) {
            for (byte c : p) {
                h ^= (c & 0xff);
                h *= 0x100000001b3L;
            }
            h ^= '\n';
            h *= 0x100000001b3L;
        }
        return String.format("%016x", h);
    }

    static String report(Report r) {
        StringBuilder files = new StringBuilder();
        StringBuilder bytes = new StringBuilder();
        for (FileClass c : r.classes()) {
            files.append(files.length() == 0 ? "" : ",").append('"').append(c.label()).append("\":")
                    .append(r.files(c));
            bytes.append(bytes.length() == 0 ? "" : ",").append('"').append(c.label()).append("\":")
                    .append(r.bytes(c));
        }
        List<String> paths = new ArrayList<String>();
        for (Report.DeletedPath p : r.paths()) {
            paths.add(p.path());
        }
        StringBuilder committed = new StringBuilder();
        for (Long id : r.committedSnapshotIds()) {
            committed.append(committed.length() == 0 ? "" : ",").append(id);
        }
        return "{\"kind\":\"" + r.kind().label() + "\",\"dry_run\":" + r.dryRun() + ",\"expired\":"
                + r.expiredCount() + ",\"expired_range\":"
                + (r.hasExpiredRange() ? "[" + r.firstExpiredId() + "," + r.lastExpiredId() + "]" : "null")
                + ",\"earliest_after\":" + (r.earliestAfter() == null ? "null" : r.earliestAfter().toString())
                + ",\"changelogs_written\":" + r.changelogsWritten() + ",\"files\":{" + files
                + "},\"bytes\":{" + bytes + "},\"total_files\":" + r.totalFiles() + ",\"total_bytes\":"
                + r.totalBytes() + ",\"dirs_removed\":" + r.dirsRemoved() + ",\"failed\":"
                + r.failures().size() + ",\"paths\":" + paths.size() + ",\"paths_fnv1a\":\""
                + pathsFnv1a(paths) + "\",\"names\":" + strings(r.names()) + ",\"missing\":"
                + strings(r.missing()) + ",\"marked\":{\"files\":" + r.filesMarkedDeleted() + ",\"rows\":"
                + r.rowsMarkedDeleted() + ",\"bytes\":" + r.bytesMarkedDeleted() + "},\"committed\":["
                + committed + "],\"orphan\":{\"candidates\":" + r.candidates() + ",\"referenced\":"
                + r.referenced() + ",\"vetoed\":" + r.vetoed() + "},\"warnings\":" + r.warnings().size()
                + ",\"steps\":" + r.steps().size() + "}";
    }
}
