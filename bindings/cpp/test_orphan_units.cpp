// Tests of orphan-file removal as units through the C++ wrapper (paimon_cleanup::orphan_units in
// include/paimon_cleanup.hpp) on a table written by paimon-gen with orphan data files, every file
// made 3 days old: four copies of one table; the single-process remove_orphan_files on the first,
// the unsharded unit sequence on the second, the sharded one (3 shards) on the third and a dry
// run of the sharded sequence on the fourth. Units are executed and results merged in reverse
// order. The reports must agree with the single run's (files and bytes per class, candidates,
// referenced, the set of deleted paths), the real runs must leave the same files, and the dry
// run must change nothing. Foreign bytes, a result merged twice, a missing unit result and a
// missing shard report are refused with Status::InvalidArgument before anything is deleted.
//
// paimon-gen: $PAIMON_GEN, else PAIMON_GEN_DEFAULT (set by CMake: cargo's target/release). When
// it is missing the test is skipped (exit 77) unless PAIMON_REQUIRE_GEN=1
// (scripts/test-bindings.sh builds it and sets that).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paimon_cleanup.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace pc = paimon_cleanup;
namespace ou = paimon_cleanup::orphan_units;

namespace {

int failures = 0;
int checks = 0;

/** Writes a table with paimon-gen (2 partitions, 2 buckets, compactions, tags and 40 orphan data
 *  files) and makes every file 3 days old, so a cut-off one day back takes the orphans. */
fs::path generate(const std::string &gen, const fs::path &table) {
    std::string cmd = "'" + gen + "' '" + table.string() +
                      "' --snapshots 12 --files-per-commit 3 --partitions 2 --buckets 2"
                      " --compact-every 3 --tags 2 --orphans 40 --seed 11 >/dev/null";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("paimon-gen failed: " + cmd);
    auto old = fs::file_time_type::clock::now() - std::chrono::hours(72);
    for (auto &e : fs::recursive_directory_iterator(table))
        if (e.is_regular_file()) fs::last_write_time(e.path(), old);
    return table;
}

pc::OrphanConfig orphan_config(bool dry_run) {
    pc::OrphanConfig cfg;
    cfg.older_than(std::chrono::system_clock::now() - std::chrono::hours(24)).dry_run(dry_run);
    return cfg;
}

/** Merges results in reverse order, alternating the argument order (merge is commutative). */
pc::Bytes merge_reversed(const std::vector<pc::Bytes> &parts) {
    pc::Bytes out;
    for (size_t i = parts.size(); i-- > 0;)
        out = (i % 2 == 0) ? ou::merge(out, parts[i]) : ou::merge(parts[i], out);
    return out;
}

/** Executes every unit, the last one first, and returns their results in that order. */
std::vector<pc::Bytes> execute_reversed(const pc::Executor &exec,
                                        const std::vector<pc::Bytes> &units) {
    std::vector<pc::Bytes> results;
    for (size_t i = units.size(); i-- > 0;) results.push_back(ou::execute(exec, units[i]));
    return results;
}

/** What two runs must agree on: files and bytes per class, candidates, referenced, paths. */
struct Outcome {
    std::vector<std::pair<uint64_t, uint64_t>> per_class;
    uint64_t candidates = 0;
    uint64_t referenced = 0;
    std::vector<std::string> paths;  // "<class> <path>", sorted
    bool operator==(const Outcome &o) const {
        return per_class == o.per_class && candidates == o.candidates &&
               referenced == o.referenced && paths == o.paths;
    }
};

Outcome outcome(const pc::Report &r) {
    Outcome o;
    for (int32_t c = 0; c < pc::kFileClassCount; c++)
        o.per_class.emplace_back(r.files(static_cast<pc::FileClass>(c)),
                                 r.bytes(static_cast<pc::FileClass>(c)));
    o.candidates = r.candidates();
    o.referenced = r.referenced();
    for (const pc::DeletedPath &p : r.paths())
        o.paths.push_back(std::string(pc::file_class_name(p.file_class)) + " " + p.path);
    std::sort(o.paths.begin(), o.paths.end());
    return o;
}

/** Runs `f`, which must throw pc::Error with Status::InvalidArgument. */
template <class F>
void expect_invalid(F &&f, const char *what) {
    bool refused = false;
    try {
        f();
    } catch (const pc::Error &e) {
        refused = e.status() == pc::Status::InvalidArgument;
        std::printf("  %s -> %s\n", what, e.what());
    }
    CHECK(refused);
    if (!refused) std::fprintf(stderr, "  %s was not refused\n", what);
}

/** plan, plan units, decide, delete units, finish; a missing unit result, a result merged twice
 *  and foreign bytes are refused first, with nothing deleted. */
pc::Report run_unsharded(const pc::Context &table, const pc::Executor &exec,
                         const pc::OrphanConfig &cfg, const fs::path &root) {
    ou::Step plan = ou::plan(table, exec, cfg);
    CHECK(!plan.state.empty());
    CHECK(plan.units.size() >= 2);
    std::vector<pc::Bytes> results = execute_reversed(exec, plan.units);
    pc::Bytes merged = merge_reversed(results);
    // Any order and grouping give the same bytes.
    pc::Bytes forward;
    for (const pc::Bytes &r : results) forward = ou::merge(forward, r);
    CHECK(forward == merged);

    auto before = file_tree(root);
    std::vector<pc::Bytes> missing_one(results.begin() + 1, results.end());
    pc::Bytes partial = merge_reversed(missing_one);
    expect_invalid([&] { (void)ou::decide(table, exec, cfg, plan.state, partial); },
                   "a missing unit result");
    expect_invalid([&] { (void)ou::merge(partial, partial); }, "a result merged twice");
    expect_invalid([&] { (void)ou::execute(exec, pc::Bytes{1, 2, 3}); }, "not a unit");
    CHECK(file_tree(root) == before);

    ou::Step decision = ou::decide(table, exec, cfg, plan.state, merged);
    CHECK(!decision.units.empty());
    return ou::finish(table, exec, decision.state,
                      merge_reversed(execute_reversed(exec, decision.units)));
}

/** split, gate, decide per shard (the last shard first), gate again until it confirms the
 *  round, conclude, delete units, finish; a missing shard report is refused. */
pc::Report run_sharded(const pc::Context &table, const pc::Executor &exec,
                       const pc::OrphanConfig &cfg, uint32_t shards) {
    ou::Step plan = ou::plan(table, exec, cfg);
    std::vector<pc::Bytes> summaries;
    std::vector<std::vector<pc::Bytes>> pieces(shards);
    for (size_t i = plan.units.size(); i-- > 0;) {
        ou::Split s = ou::split(ou::execute(exec, plan.units[i]), shards);
        CHECK(s.shards.size() == shards);
        summaries.push_back(std::move(s.summary));
        for (uint32_t k = 0; k < shards && k < s.shards.size(); k++)
            pieces[k].push_back(std::move(s.shards[k]));
    }
    pc::Bytes summary = merge_reversed(summaries);
    ou::Gated gated = ou::gate(table, exec, plan.state, summary, shards);
    CHECK(gated.decide);  // the first gate always asks the shards to decide
    std::vector<pc::Bytes> reports, delete_units;
    for (int round = 0; gated.decide && round < 5; round++) {
        reports.clear();
        delete_units.clear();
        for (uint32_t k = shards; k-- > 0;) {
            ou::ShardDecision d =
                ou::decide_shard(table, exec, cfg, gated.gate, k, merge_reversed(pieces[k]));
            reports.push_back(std::move(d.report));
            for (pc::Bytes &u : d.delete_units) delete_units.push_back(std::move(u));
        }
        gated = ou::gate(table, exec, gated.state, summary, shards);
    }
    CHECK(!gated.decide);  // nothing commits meanwhile: the second gate confirms the round
    std::vector<pc::Bytes> without_first(reports.begin() + 1, reports.end());
    expect_invalid([&] { (void)ou::conclude(gated.state, summary, without_first); },
                   "a missing shard report");
    pc::Bytes decision = ou::conclude(gated.state, summary, reports);
    return ou::finish(table, exec, decision, merge_reversed(execute_reversed(exec, delete_units)));
}

void test_units(const std::string &gen) {
    TempDir tmp("paimon-cleanup-orphan-units");
    fs::path source = generate(gen, tmp.path / "source");
    fs::path one = tmp.path / "one", units = tmp.path / "units", sharded = tmp.path / "sharded",
             dry = tmp.path / "dry";
    for (const fs::path &dst : {one, units, sharded, dry})
        fs::copy(source, dst, fs::copy_options::recursive);
    // fs::copy does not keep modification times: age the copies again.
    auto old = fs::file_time_type::clock::now() - std::chrono::hours(72);
    for (const fs::path &dst : {one, units, sharded, dry})
        for (auto &e : fs::recursive_directory_iterator(dst))
            if (e.is_regular_file()) fs::last_write_time(e.path(), old);
    pc::Executor exec(2);
    pc::OrphanConfig cfg = orphan_config(false);

    pc::Report single = pc::Context(one.string()).remove_orphan_files(exec, cfg);
    Outcome want = outcome(single);
    std::printf("single-process: %llu files deleted of %llu candidates\n",
                static_cast<unsigned long long>(single.total_files()),
                static_cast<unsigned long long>(want.candidates));
    CHECK(single.files(pc::FileClass::Data) >= 40);  // the generated orphans

    pc::Report unsharded = run_unsharded(pc::Context(units.string()), exec, cfg, units);
    CHECK(unsharded.kind() == pc::ReportKind::RemoveOrphanFiles);
    CHECK(outcome(unsharded) == want);
    CHECK(file_tree(units) == file_tree(one));

    pc::Report by_shard = run_sharded(pc::Context(sharded.string()), exec, cfg, 3);
    CHECK(outcome(by_shard) == want);
    CHECK(file_tree(sharded) == file_tree(one));

    // The dry run of the sharded sequence: the same report, nothing changed.
    auto before = file_tree(dry);
    pc::Report dry_run = run_sharded(pc::Context(dry.string()), exec, orphan_config(true), 3);
    CHECK(dry_run.dry_run());
    CHECK(outcome(dry_run) == want);
    CHECK(file_tree(dry) == before);

    expect_invalid([] { (void)ou::merge(pc::Bytes{1}, pc::Bytes{2}); }, "foreign bytes to merge");
    expect_invalid([] { (void)ou::split(pc::Bytes{1, 2}, 2); }, "foreign bytes to split");
    expect_invalid([] { (void)ou::conclude(pc::Bytes{1}, pc::Bytes{2}, {pc::Bytes{3}}); },
                   "foreign bytes to conclude");
}

}  // namespace

int main() {
    try {
        std::string gen = gen_binary(PAIMON_GEN_DEFAULT);
        if (gen.empty()) {
            const char *require = std::getenv("PAIMON_REQUIRE_GEN");
            bool required = require != nullptr && std::string(require) == "1";
            std::printf("%s: paimon-gen not found (set PAIMON_GEN)\n", required ? "FAIL" : "SKIP");
            return required ? 1 : 77;
        }
        test_units(gen);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "FAIL: uncaught exception: %s\n", e.what());
        return 1;
    }
    std::printf("test_cpp_wrapper_orphan_units: %d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
