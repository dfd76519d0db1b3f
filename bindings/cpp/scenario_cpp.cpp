// The cross-binding scenario through the C++ wrapper (paimon_cleanup.hpp).
//
//   paimon_cleanup_scenario_cpp <table-copy>
//
// Runs the steps of bindings/SCENARIO.md on a table copy the caller prepared and prints one
// canonical line per step ("SCENARIO <step> <json>"). scripts/test-bindings.sh runs the same
// scenario through C, C++, Go and Java on fresh copies of one fixture and requires identical
// lines. Exit status: 0 when every step ran, 1 otherwise.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "paimon_cleanup.hpp"
#include "scenario_format.hpp"

namespace pc = paimon_cleanup;

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <table-copy>\n", argv[0]);
        return 2;
    }
    const std::string table = argv[1];
    try {
        pc::Executor exec(2);
        pc::Context ctx(table);

        std::printf("SCENARIO summary-before %s\n", scenario::summary_json(ctx.summary(exec)).c_str());

        auto expire_config = [](bool dry_run) {
            pc::ExpireConfig cfg;
            cfg.retain_min(1)
                .older_than(std::chrono::system_clock::now())
                .max_expires(1000)
                .dry_run(dry_run);
            return cfg;
        };
        auto line = [](const char *step, const pc::Report &r) {
            std::printf("SCENARIO %s %s\n", step, scenario::report_json(r).c_str());
        };
        line("expire-dry-run", ctx.expire_snapshots(exec, expire_config(true)));
        line("expire", ctx.expire_snapshots(exec, expire_config(false)));

        pc::OrphanConfig orphan_dry;
        orphan_dry.dry_run(true);
        line("orphan-dry-run", ctx.remove_orphan_files(exec, orphan_dry));
        line("orphan", ctx.remove_orphan_files(exec, pc::OrphanConfig()));

        line("drop-partitions", ctx.drop_partitions(exec, {{{"f1", "20"}}}));
        // Past the drop commit's millisecond: its snapshot is older than the next cut-off.
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        line("expire-after-drop", ctx.expire_snapshots(exec, expire_config(false)));

        std::printf("SCENARIO summary-after %s\n", scenario::summary_json(ctx.summary(exec)).c_str());

        pc::Context missing(table + "/does-not-exist");
        try {
            (void)missing.summary(exec);
            std::printf("SCENARIO missing-table {\"status\":0}\n");
        } catch (const pc::Error &e) {
            std::printf("SCENARIO missing-table {\"status\":%d,\"name\":\"%s\"}\n",
                        static_cast<int>(e.status()), pc::status_name(e.status()));
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "scenario failed: %s\n", e.what());
        return 1;
    }
    return 0;
}
