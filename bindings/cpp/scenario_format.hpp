// Canonical one-line JSON of a table summary and of a report, shared by the C++ scenario and the
// C++ wrapper test. The same format is produced by bindings/cpp/scenario_c.c, the Go test
// (bindings/go/scenario_test.go) and the Java test (ScenarioFormat.java); see bindings/SCENARIO.md.
#ifndef PAIMON_CLEANUP_SCENARIO_FORMAT_HPP
#define PAIMON_CLEANUP_SCENARIO_FORMAT_HPP

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "paimon_cleanup.hpp"

namespace scenario {

inline std::string u64(uint64_t v) { return std::to_string(v); }
inline std::string i64(int64_t v) { return std::to_string(v); }

/** FNV-1a 64 of the sorted paths, each followed by '\n', as 16 lower-case hex digits. */
inline std::string paths_fnv1a(std::vector<std::string> paths) {
    std::sort(paths.begin(), paths.end());
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const std::string &p : paths) {
        for (unsigned char c : p) {
            h ^= c;
            h *= 0x100000001b3ULL;
        }
        h ^= static_cast<unsigned char>('\n');
        h *= 0x100000001b3ULL;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
    return buf;
}

/** A JSON string: `"` and `\` escaped with a backslash, control characters as \u00XX. */
inline std::string quote(const std::string &in) {
    std::string out = "\"";
    for (unsigned char c : in) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

inline std::string string_list(const std::vector<std::string> &items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); i++) out += (i ? "," : "") + quote(items[i]);
    return out + "]";
}

inline std::string summary_json(const paimon_cleanup::TableSummary &s) {
    return std::string("{\"has_snapshots\":") + (s.has_snapshots ? "true" : "false") +
           ",\"earliest\":" + i64(s.earliest_snapshot_id) + ",\"latest\":" +
           i64(s.latest_snapshot_id) + ",\"snapshots\":" + u64(s.snapshot_count) +
           ",\"tags\":" + u64(s.tag_count) + ",\"branches\":" + u64(s.branch_count) +
           ",\"live_files\":" + u64(s.live_file_count) + ",\"live_bytes\":" +
           u64(s.live_file_bytes) + "}";
}

inline std::string report_json(const paimon_cleanup::ReportView &r) {
    namespace pc = paimon_cleanup;
    std::string files, bytes;
    for (int32_t c = 0; c < pc::kFileClassCount; c++) {
        uint64_t n = r.files(static_cast<pc::FileClass>(c));
        if (n == 0) continue;
        const char *name = pc::file_class_name(static_cast<pc::FileClass>(c));
        files += std::string(files.empty() ? "" : ",") + "\"" + name + "\":" + u64(n);
        bytes += std::string(bytes.empty() ? "" : ",") + "\"" + name + "\":" +
                 u64(r.bytes(static_cast<pc::FileClass>(c)));
    }
    std::vector<std::string> paths;
    for (const pc::DeletedPath &p : r.paths()) paths.push_back(p.path);
    std::string committed;
    for (int64_t id : r.committed_snapshot_ids()) committed += (committed.empty() ? "" : ",") + i64(id);
    auto range = r.expired_range();
    auto earliest = r.earliest_after();
    return std::string("{\"kind\":\"") + r.kind_name() + "\",\"dry_run\":" +
           (r.dry_run() ? "true" : "false") + ",\"expired\":" + u64(r.expired_count()) +
           ",\"expired_range\":" +
           (range ? "[" + i64(range->first) + "," + i64(range->second) + "]" : "null") +
           ",\"earliest_after\":" + (earliest ? i64(*earliest) : "null") +
           ",\"changelogs_written\":" + u64(r.changelogs_written()) + ",\"files\":{" + files +
           "},\"bytes\":{" + bytes + "},\"total_files\":" + u64(r.total_files()) +
           ",\"total_bytes\":" + u64(r.total_bytes()) + ",\"dirs_removed\":" +
           u64(r.dirs_removed()) + ",\"failed\":" + u64(r.failed_count()) +
           ",\"paths\":" + u64(paths.size()) + ",\"paths_fnv1a\":\"" + paths_fnv1a(paths) +
           "\",\"names\":" + string_list(r.names()) + ",\"missing\":" + string_list(r.missing()) +
           ",\"marked\":{\"files\":" + u64(r.files_marked_deleted()) + ",\"rows\":" +
           u64(r.rows_marked_deleted()) + ",\"bytes\":" + u64(r.bytes_marked_deleted()) +
           "},\"committed\":[" + committed + "],\"orphan\":{\"candidates\":" +
           u64(r.candidates()) + ",\"referenced\":" + u64(r.referenced()) + ",\"vetoed\":" +
           u64(r.vetoed()) + "},\"warnings\":" + u64(r.warnings().size()) + ",\"steps\":" +
           u64(r.steps().size()) + "}";
}

}  // namespace scenario

#endif
