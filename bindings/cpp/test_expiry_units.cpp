// Tests of snapshot expiry as units through the C++ wrapper (paimon_cleanup::expiry_units in
// include/paimon_cleanup.hpp) on a table written by paimon-gen (compactions, so that expiry
// frees data files; tags, so that protect units have work): three copies of one table, the
// single-process expire_snapshots on the first, the unsharded unit sequence on the second and the
// sharded one (3 shards) on the third, units executed and results merged in reverse order. The
// reports must agree (expired snapshots, files and bytes per class, the set of deleted paths)
// and the three tables must hold the same files afterwards. A truncated delete unit fails with
// Status::InvalidArgument and deletes nothing.
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
namespace eu = paimon_cleanup::expiry_units;

namespace {

int failures = 0;
int checks = 0;

/** Writes a table with paimon-gen: 24 snapshots, compactions every 3 commits, 2 tags. */
fs::path generate(const std::string &gen, const fs::path &table) {
    std::string cmd = "'" + gen + "' '" + table.string() +
                      "' --snapshots 24 --files-per-commit 3 --partitions 2 --buckets 2"
                      " --compact-every 3 --tags 2 --seed 7 >/dev/null";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("paimon-gen failed: " + cmd);
    return table;
}

pc::ExpireConfig expire_config() {
    pc::ExpireConfig cfg;
    cfg.retain_min(3).older_than(std::chrono::system_clock::now()).max_expires(1000);
    return cfg;
}

/** Merges results in reverse order, alternating the argument order (merge is commutative). */
pc::Bytes merge_reversed(const std::vector<pc::Bytes> &parts) {
    pc::Bytes out;
    for (size_t i = parts.size(); i-- > 0;)
        out = (i % 2 == 0) ? eu::merge(out, parts[i]) : eu::merge(parts[i], out);
    return out;
}

/** Executes every unit, the last one first, and merges their results. */
pc::Bytes execute_reversed(const pc::Executor &exec, const std::vector<pc::Bytes> &units) {
    std::vector<pc::Bytes> results;
    for (size_t i = units.size(); i-- > 0;) results.push_back(eu::execute(exec, units[i]));
    return merge_reversed(results);
}

/** What two runs must agree on: expired snapshots, files and bytes per class, paths. */
struct Outcome {
    uint64_t expired = 0;
    std::vector<std::pair<uint64_t, uint64_t>> per_class;
    std::vector<std::string> paths;  // "<class> <path>", sorted
    bool operator==(const Outcome &o) const {
        return expired == o.expired && per_class == o.per_class && paths == o.paths;
    }
};

Outcome outcome(const pc::Report &r) {
    Outcome o;
    o.expired = r.expired_count();
    for (int32_t c = 0; c < pc::kFileClassCount; c++)
        o.per_class.emplace_back(r.files(static_cast<pc::FileClass>(c)),
                                 r.bytes(static_cast<pc::FileClass>(c)));
    for (const pc::DeletedPath &p : r.paths())
        o.paths.push_back(std::string(pc::file_class_name(p.file_class)) + " " + p.path);
    std::sort(o.paths.begin(), o.paths.end());
    return o;
}

/** The unsharded sequence: plan, candidates, protect, protect units, decide, delete units,
 *  finish. A truncated delete unit is refused first, with nothing deleted. */
pc::Report run_unsharded(const pc::Context &table, const pc::Executor &exec, const fs::path &root) {
    eu::Step plan = eu::plan(table, exec, expire_config());
    CHECK(!plan.state.empty());
    CHECK(!plan.units.empty());
    pc::Bytes candidates = execute_reversed(exec, plan.units);
    eu::Step protect = eu::protect(table, exec, plan.state, candidates);
    CHECK(!protect.units.empty());  // the retained snapshots and tags protect files
    pc::Bytes kept = execute_reversed(exec, protect.units);
    eu::Step decision = eu::decide(table, exec, protect.state, candidates, kept);
    CHECK(!decision.units.empty());

    // A corrupted delete unit: the binding's error, and nothing deleted.
    auto before = file_tree(root);
    pc::Bytes broken(decision.units[0].begin(),
                     decision.units[0].begin() + decision.units[0].size() / 2);
    bool refused = false;
    try {
        (void)eu::execute(exec, broken);
    } catch (const pc::Error &e) {
        refused = e.status() == pc::Status::InvalidArgument;
        std::printf("  truncated delete unit -> %s\n", e.what());
    }
    CHECK(refused);
    CHECK(file_tree(root) == before);
    // A result merged twice is refused as well.
    bool doubled = false;
    try {
        (void)eu::merge(candidates, candidates);
    } catch (const pc::Error &e) {
        doubled = e.status() == pc::Status::InvalidArgument;
    }
    CHECK(doubled);

    pc::Bytes deleted = execute_reversed(exec, decision.units);
    return eu::finish(table, exec, decision.state, deleted);
}

/** The sharded sequence with `shards` shards: split, gate, decide per shard (the last shard
 *  first), conclude, delete units, finish. With `task_paths` the gate hands the freed data and
 *  changelog paths to the tasks: the delete units run through execute_handing_paths() and the
 *  paths they deleted are appended to `*task_paths`. */
pc::Report run_sharded(const pc::Context &table, const pc::Executor &exec, uint32_t shards,
                       std::vector<std::string> *task_paths = nullptr) {
    eu::Step plan = eu::plan(table, exec, expire_config());
    std::vector<pc::Bytes> summaries;
    std::vector<std::vector<pc::Bytes>> pieces(shards);
    for (size_t i = plan.units.size(); i-- > 0;) {
        eu::Split s = eu::split(eu::execute(exec, plan.units[i]), shards);
        CHECK(s.shards.size() == shards);
        summaries.push_back(std::move(s.summary));
        for (uint32_t k = 0; k < shards; k++) pieces[k].push_back(std::move(s.shards[k]));
    }
    eu::Gated gated =
        eu::gate(table, exec, plan.state, merge_reversed(summaries), shards, task_paths != nullptr);
    std::vector<pc::Bytes> reports, delete_units;
    for (uint32_t k = shards; k-- > 0;) {
        eu::ShardDecision d = eu::decide_shard(exec, gated.gate, k, merge_reversed(pieces[k]));
        CHECK(d.paths.empty());  // only a dry run's shards hand out paths
        reports.push_back(std::move(d.report));
        for (pc::Bytes &u : d.delete_units) delete_units.push_back(std::move(u));
    }
    CHECK(!delete_units.empty());
    bool missing = false;
    try {
        std::vector<pc::Bytes> without_first(reports.begin() + 1, reports.end());
        (void)eu::conclude(gated.decision, without_first);
    } catch (const pc::Error &e) {
        missing = e.status() == pc::Status::InvalidArgument;
    }
    CHECK(missing);
    pc::Bytes decision = eu::conclude(gated.decision, reports);
    if (task_paths == nullptr)
        return eu::finish(table, exec, decision, execute_reversed(exec, delete_units));
    std::vector<pc::Bytes> results;
    for (size_t i = delete_units.size(); i-- > 0;) {
        bool refused = false;  // plain execute() would lose the unit's paths
        try {
            (void)eu::execute(exec, delete_units[i]);
        } catch (const pc::Error &e) {
            refused = e.status() == pc::Status::InvalidArgument;
        }
        CHECK(refused);
        eu::Executed x = eu::execute_handing_paths(exec, delete_units[i]);
        results.push_back(std::move(x.result));
        for (std::string &p : x.paths) task_paths->push_back(std::move(p));
    }
    return eu::finish(table, exec, decision, merge_reversed(results));
}

void test_units(const std::string &gen) {
    TempDir tmp("paimon-cleanup-units");
    fs::path source = generate(gen, tmp.path / "source");
    fs::path one = tmp.path / "one", units = tmp.path / "units", sharded = tmp.path / "sharded";
    fs::path handed = tmp.path / "handed";
    for (const fs::path &dst : {one, units, sharded, handed})
        fs::copy(source, dst, fs::copy_options::recursive);
    pc::Executor exec(2);

    pc::Report single = pc::Context(one.string()).expire_snapshots(exec, expire_config());
    Outcome want = outcome(single);
    std::printf("single-process: %llu snapshots, %llu files (%llu data)\n",
                static_cast<unsigned long long>(want.expired),
                static_cast<unsigned long long>(single.total_files()),
                static_cast<unsigned long long>(single.files(pc::FileClass::Data)));
    CHECK(want.expired > 0);
    CHECK(single.files(pc::FileClass::Data) > 0);  // the compactions freed data files

    pc::Report unsharded = run_unsharded(pc::Context(units.string()), exec, units);
    CHECK(unsharded.kind() == pc::ReportKind::ExpireSnapshots);
    CHECK(outcome(unsharded) == want);
    CHECK(file_tree(units) == file_tree(one));

    CHECK(!single.paths_elsewhere());

    pc::Report by_shard = run_sharded(pc::Context(sharded.string()), exec, 3);
    CHECK(outcome(by_shard) == want);
    CHECK(!by_shard.paths_elsewhere());
    CHECK(file_tree(sharded) == file_tree(one));

    // The paths handed to the tasks: the same files go and the same counts come back; the
    // listing is a sample (the metadata files and at most 20 of the tasks' paths) and says so,
    // and with the tasks' paths it is every path of the one-call run.
    std::vector<std::string> task_paths;
    pc::Report elsewhere = run_sharded(pc::Context(handed.string()), exec, 3, &task_paths);
    CHECK(file_tree(handed) == file_tree(one));
    CHECK(elsewhere.paths_elsewhere());
    Outcome got = outcome(elsewhere);
    CHECK(got.expired == want.expired && got.per_class == want.per_class);
    std::vector<pc::DeletedPath> listed = elsewhere.paths(), all = single.paths();
    CHECK(!task_paths.empty());
    CHECK(listed.size() + task_paths.size() <= all.size() + 20);
    std::vector<std::string> joined = task_paths, every;
    for (const pc::DeletedPath &p : listed) joined.push_back(p.path);
    for (const pc::DeletedPath &p : all) every.push_back(p.path);
    std::sort(joined.begin(), joined.end());
    joined.erase(std::unique(joined.begin(), joined.end()), joined.end());
    std::sort(every.begin(), every.end());
    CHECK(joined == every);
    std::printf("paths to the tasks: %zu paths with the tasks, %zu listed of %zu\n",
                task_paths.size(), listed.size(), all.size());
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
    std::printf("test_cpp_wrapper_expiry_units: %d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
