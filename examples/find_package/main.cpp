// Prints the library version and, given a table path or URI, the table summary.
//   paimon_cleanup_example [table-uri] [key=value ...]
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "paimon_cleanup.h"

namespace {

struct Free {
    void operator()(PaimonCleanupError *e) const { paimon_cleanup_error_free(e); }
    void operator()(PaimonCleanupExecutor *e) const { paimon_cleanup_executor_free(e); }
    void operator()(PaimonCleanupContext *c) const { paimon_cleanup_context_free(c); }
};

int report(const char *what, PaimonCleanupStatus status, PaimonCleanupError *raw) {
    std::unique_ptr<PaimonCleanupError, Free> err(raw);
    std::fprintf(stderr, "%s failed: %s (%d): %s\n", what, paimon_cleanup_status_name(status),
                 static_cast<int>(status), paimon_cleanup_error_message(err.get()));
    return 1;
}

}  // namespace

int main(int argc, char **argv) {
    std::printf("paimon-cleanup %s (ABI %u)\n", paimon_cleanup_version(),
                paimon_cleanup_abi_version());
    if (paimon_cleanup_abi_version() != PAIMON_CLEANUP_ABI_VERSION) {
        std::fprintf(stderr, "ABI mismatch: header %u, library %u\n",
                     static_cast<unsigned>(PAIMON_CLEANUP_ABI_VERSION),
                     paimon_cleanup_abi_version());
        return 1;
    }
    if (argc < 2) return 0;

    std::vector<std::string> keys, values;
    for (int i = 2; i < argc; i++) {
        std::string kv = argv[i];
        auto eq = kv.find('=');
        if (eq == std::string::npos) {
            std::fprintf(stderr, "option '%s' is not key=value\n", argv[i]);
            return 2;
        }
        keys.push_back(kv.substr(0, eq));
        values.push_back(kv.substr(eq + 1));
    }
    std::vector<const char *> key_ptrs, value_ptrs;
    for (size_t i = 0; i < keys.size(); i++) {
        key_ptrs.push_back(keys[i].c_str());
        value_ptrs.push_back(values[i].c_str());
    }

    PaimonCleanupError *err = nullptr;
    PaimonCleanupExecutor *raw_exec = nullptr;
    PaimonCleanupStatus status = paimon_cleanup_executor_new(2, &raw_exec, &err);
    if (status != PAIMON_CLEANUP_STATUS_OK) return report("paimon_cleanup_executor_new", status, err);
    std::unique_ptr<PaimonCleanupExecutor, Free> exec(raw_exec);

    PaimonCleanupContext *raw_ctx = nullptr;
    status = paimon_cleanup_context_new(argv[1], key_ptrs.data(), value_ptrs.data(),
                                        key_ptrs.size(), &raw_ctx, &err);
    if (status != PAIMON_CLEANUP_STATUS_OK) return report("paimon_cleanup_context_new", status, err);
    std::unique_ptr<PaimonCleanupContext, Free> ctx(raw_ctx);

    PaimonCleanupTableSummary s{};
    status = paimon_cleanup_table_summary(ctx.get(), exec.get(), &s, &err);
    if (status != PAIMON_CLEANUP_STATUS_OK) return report("paimon_cleanup_table_summary", status, err);

    std::printf("table:          %s\n", argv[1]);
    if (s.has_snapshots)
        std::printf("snapshots:      %llu (%lld..%lld)\n",
                    static_cast<unsigned long long>(s.snapshot_count),
                    static_cast<long long>(s.earliest_snapshot_id),
                    static_cast<long long>(s.latest_snapshot_id));
    else
        std::printf("snapshots:      none\n");
    std::printf("tags:           %llu\n", static_cast<unsigned long long>(s.tag_count));
    std::printf("other branches: %llu\n", static_cast<unsigned long long>(s.branch_count));
    std::printf("live files:     %llu (%llu bytes)\n",
                static_cast<unsigned long long>(s.live_file_count),
                static_cast<unsigned long long>(s.live_file_bytes));
    return 0;
}
