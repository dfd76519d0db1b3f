// Tests of the header-only C++ wrapper (include/paimon_cleanup.hpp): RAII and moves, Error and
// Result, argument errors, a missing table, and on a copy of a Java-written fixture table the
// summary, a dry-run and a real snapshot expiry, the progress callback, cancellation (before the
// run and from the callback), and an exception thrown by the callback.
//
// Fixtures: $PAIMON_FIXTURES, else PAIMON_FIXTURES_DEFAULT (set by CMake). Without them the
// fixture part is skipped (exit 77) unless PAIMON_REQUIRE_FIXTURES=1.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "paimon_cleanup.hpp"
#include "test_support.hpp"
#include "scenario_format.hpp"

namespace fs = std::filesystem;
namespace pc = paimon_cleanup;

static_assert(!std::is_copy_constructible<pc::Executor>::value, "move-only");
static_assert(std::is_nothrow_move_constructible<pc::Executor>::value, "movable");
static_assert(!std::is_copy_constructible<pc::Context>::value, "move-only");
static_assert(!std::is_copy_constructible<pc::ExpireConfig>::value, "move-only");
static_assert(!std::is_copy_constructible<pc::Report>::value, "move-only");
static_assert(std::is_copy_constructible<pc::CancelToken>::value, "shared flag");
static_assert(std::is_base_of<std::runtime_error, pc::Error>::value, "std exception");

namespace {

int failures = 0;
int checks = 0;

/** Runs `f`, which must throw pc::Error with `expected`. */
template <class F>
void expect_error(pc::Status expected, F &&f, const char *what) {
    checks++;
    try {
        f();
        failures++;
        std::fprintf(stderr, "FAIL %s: no exception, expected %s\n", what, pc::status_name(expected));
    } catch (const pc::Error &e) {
        if (e.status() != expected || e.message().empty() ||
            std::string(e.what()).find(pc::status_name(expected)) != 0) {
            failures++;
            std::fprintf(stderr, "FAIL %s: got %s, expected %s\n", what, e.what(),
                         pc::status_name(expected));
        } else {
            std::printf("  %s -> %s\n", what, e.what());
        }
    }
}

std::string fixtures_dir() {
    const char *env = std::getenv("PAIMON_FIXTURES");
    std::string dir = (env != nullptr && env[0] != '\0') ? env : PAIMON_FIXTURES_DEFAULT;
    return fs::is_directory(dir) ? dir : std::string();
}

fs::path copy_table(const std::string &fixtures, const std::string &relative, const TempDir &tmp,
                    const std::string &name) {
    fs::path dst = tmp.path / name;
    fs::copy(fs::path(fixtures) / relative, dst, fs::copy_options::recursive);
    for (auto &e : fs::recursive_directory_iterator(dst))
        fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    return dst;
}

pc::ExpireConfig expire_all(bool dry_run) {
    pc::ExpireConfig cfg;
    cfg.retain_min(1).older_than(std::chrono::system_clock::now()).max_expires(1000).dry_run(dry_run);
    return cfg;
}

void test_basics() {
    std::printf("basics\n");
    CHECK(pc::abi_compatible());
    CHECK(std::string(pc::version()) == PAIMON_CLEANUP_VERSION);
    CHECK(std::string(pc::status_name(pc::Status::NotFound)) == "not_found");
    CHECK(std::string(pc::file_class_name(pc::FileClass::ManifestList)) == "manifest_list");
    CHECK(std::string(pc::report_kind_name(pc::ReportKind::ExpireSnapshots)) == "expire_snapshots");

    // older_than as Java's procedures take it: durations back from `now`, timestamps as given.
    const auto now = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000000LL));
    const auto ms = [](std::chrono::system_clock::time_point t) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    };
    CHECK(ms(pc::parse_older_than("1 d", now)) == 1700000000000LL - 86400000LL);
    CHECK(ms(pc::parse_older_than("2023-11-01 00:00:00Z", now)) == 1698796800000LL);
    for (const char *bad : {"", "12345", "yesterday", "2023-13-01 00:00:00", "2030-01-01 00:00:00Z"}) {
        expect_error(pc::Status::InvalidArgument, [&] { (void)pc::parse_older_than(bad, now); },
                     bad);
    }

    pc::Executor exec(2);
    CHECK(exec.worker_threads() == 2);
    CHECK(exec.io_concurrency() == 0);
    exec.set_io_concurrency(16);
    CHECK(exec.io_concurrency() == 16);
    expect_error(pc::Status::InvalidArgument, [&] { exec.set_io_concurrency(1u << 30); },
                 "io concurrency out of range");

    // Moves transfer ownership; the moved-from object is empty.
    pc::Executor moved = std::move(exec);
    CHECK(moved.get() != nullptr);
    CHECK(exec.get() == nullptr);  // NOLINT(bugprone-use-after-move): documented state
    expect_error(pc::Status::NullPointer, [&] { exec.set_io_concurrency(1); }, "moved-from executor");

    pc::Result<pc::Executor> bad = pc::Executor::create(100000);
    CHECK(!bad);
    CHECK(bad.status() == pc::Status::InvalidArgument);
    CHECK(!bad.message().empty());
    expect_error(pc::Status::InvalidArgument, [&] { (void)bad.value(); }, "Result::value()");

    expect_error(pc::Status::InvalidArgument, [] { pc::Context c(""); }, "empty uri");
    expect_error(pc::Status::InvalidArgument, [] { pc::Context c("/tmp/t", {{"", "v"}}); },
                 "empty option key");
    pc::Result<pc::Context> ok = pc::Context::create("/tmp/t", {{"a", "b"}});
    CHECK(ok.ok());

    expect_error(pc::Status::InvalidArgument, [] { pc::ExpireConfig().retain_min(0); },
                 "retain_min 0");
    expect_error(pc::Status::InvalidArgument,
                 [] { pc::ExpireConfig().time_retained(std::chrono::milliseconds(-1)); },
                 "negative time retained");

    // A missing table: NOT_FOUND, through exceptions and through Result.
    TempDir tmp("paimon-cleanup-cpp");
    pc::Context missing((tmp.path / "no-such-table").string());
    expect_error(pc::Status::NotFound, [&] { (void)missing.summary(moved); }, "missing table summary");
    pc::Result<pc::TableSummary> s = missing.try_summary(moved);
    CHECK(!s && s.status() == pc::Status::NotFound);
    pc::Result<pc::Report> r = missing.try_expire_snapshots(moved, expire_all(true));
    CHECK(!r && r.status() == pc::Status::NotFound);
    expect_error(pc::Status::NotFound, [&] { (void)missing.expire_snapshots(moved, expire_all(false)); },
                 "missing table expire");

    // Errors can be copied and read on another thread.
    pc::Error copy = s.error();
    std::string seen;
    std::thread t([&] { seen = copy.message(); });
    t.join();
    CHECK(seen == s.message());

    // A cancelled token: CANCELLED before anything is read.
    pc::CancelToken token;
    pc::CancelToken alias = token;
    alias.cancel();
    CHECK(token.is_cancelled());
    pc::RunOptions run;
    run.cancel_token(token);
    expect_error(pc::Status::Cancelled,
                 [&] { (void)missing.expire_snapshots(moved, expire_all(true), run); },
                 "cancelled before the run");
}

void test_fixture(const std::string &fixtures) {
    const std::string rel = "parquet/pk_09.db/pk_09";
    std::printf("fixture %s\n", rel.c_str());
    TempDir tmp("paimon-cleanup-cpp");
    pc::Executor exec(2);

    // Summary, dry run, real run with progress.
    fs::path a = copy_table(fixtures, rel, tmp, "a");
    pc::Context ctx(a.string(), {});
    pc::TableSummary before = ctx.summary(exec);
    CHECK(before.has_snapshots);
    CHECK(before.snapshot_count > 1);
    std::printf("  summary %s\n", scenario::summary_json(before).c_str());

    pc::Report dry = ctx.expire_snapshots(exec, expire_all(true));
    CHECK(dry.dry_run());
    CHECK(dry.kind() == pc::ReportKind::ExpireSnapshots);
    CHECK(dry.expired_count() == before.snapshot_count - 1);
    CHECK(dry.paths().size() == dry.total_files());
    CHECK(ctx.summary(exec).snapshot_count == before.snapshot_count);  // nothing changed

    std::mutex m;
    std::vector<std::string> phases;
    uint64_t last_bytes = 0;
    size_t info_lines = 0, verbose_lines = 0, naming_table = 0;
    pc::RunOptions run;
    run.on_progress([&](const pc::Progress &p) {
        std::lock_guard<std::mutex> lock(m);
        if (phases.empty() || phases.back() != p.phase) phases.emplace_back(p.phase);
        CHECK(p.total == 0 || p.done <= p.total);
        last_bytes = p.bytes;
    });
    run.on_log(
        [&](const pc::LogEvent &e) {
            std::lock_guard<std::mutex> lock(m);
            if (e.level == pc::LogLevel::Info) info_lines++;
            if (e.level == pc::LogLevel::Debug || e.level == pc::LogLevel::Trace) verbose_lines++;
            if (e.message.find("expired") != std::string_view::npos && !e.target.empty())
                naming_table++;
        },
        pc::LogLevel::Info);
    pc::Report real = ctx.expire_snapshots(exec, expire_all(false), run);
    CHECK(info_lines > 0);
    CHECK(verbose_lines == 0);
    std::printf("  log: %zu info lines (%zu about expiry), none more verbose\n", info_lines,
                naming_table);
    CHECK(!real.dry_run());
    CHECK(real.expired_count() == dry.expired_count());
    CHECK(real.files_by_class() == dry.files_by_class());
    CHECK(real.bytes_by_class() == dry.bytes_by_class());
    CHECK(real.failures().empty());
    CHECK(real.expired_range().has_value());
    CHECK(real.earliest_after() == std::optional<int64_t>(before.latest_snapshot_id));
    CHECK(!phases.empty());
    std::printf("  expire %s\n  progress phases:", scenario::report_json(real).c_str());
    for (const auto &p : phases) std::printf(" [%s]", p.c_str());
    std::printf(" last bytes %llu\n", static_cast<unsigned long long>(last_bytes));
    pc::TableSummary after = ctx.summary(exec);
    CHECK(after.snapshot_count == 1);
    CHECK(after.live_file_count == before.live_file_count);

    // Cancellation from inside the progress callback.
    fs::path b = copy_table(fixtures, rel, tmp, "b");
    pc::Context ctx_b(b.string());
    pc::CancelToken token;
    pc::RunOptions cancelling;
    cancelling.cancel_token(token).on_progress([&](const pc::Progress &) { token.cancel(); });
    expect_error(pc::Status::Cancelled,
                 [&] { (void)ctx_b.expire_snapshots(exec, expire_all(false), cancelling); },
                 "cancelled from the callback");
    // A rerun converges to the same end state as the uninterrupted run.
    pc::Report rerun = ctx_b.expire_snapshots(exec, expire_all(false));
    (void)rerun;
    pc::TableSummary after_b = ctx_b.summary(exec);
    CHECK(after_b.snapshot_count == after.snapshot_count);
    CHECK(after_b.live_file_count == after.live_file_count);

    // The memory bound: a run whose plan needs more than it fails with INVALID_ARGUMENT and
    // deletes nothing; an ample bound deletes what the unbounded run deleted.
    fs::path mem = copy_table(fixtures, rel, tmp, "m");
    pc::Context ctx_m(mem.string());
    auto tree_before = file_tree(mem);
    pc::RunOptions tiny;
    tiny.max_memory(1);
    CHECK(tiny.max_memory() == 1);
    expect_error(pc::Status::MemoryLimit,
                 [&] { (void)ctx_m.expire_snapshots(exec, expire_all(false), tiny); },
                 "expiry past a 1-byte memory bound");
    pc::Result<pc::Report> bounded = ctx_m.try_expire_snapshots(exec, expire_all(false), tiny);
    CHECK(!bounded && bounded.status() == pc::Status::MemoryLimit);
    CHECK(std::string(bounded.status_name()) == "memory_limit");
    CHECK(bounded.message().find("max_memory") != std::string::npos);
    CHECK(file_tree(mem) == tree_before);
    pc::RunOptions ample;
    ample.max_memory(uint64_t(256) << 20);
    pc::Report fits = ctx_m.expire_snapshots(exec, expire_all(false), ample);
    CHECK(fits.expired_count() == real.expired_count());
    CHECK(fits.files_by_class() == real.files_by_class());
    CHECK(file_tree(mem) != tree_before);
    CHECK(ctx_m.summary(exec).snapshot_count == 1);
    std::printf("  memory bound: 1 byte refused, nothing deleted; 256 MiB deleted %llu files\n",
                static_cast<unsigned long long>(fits.total_files()));

    // An exception from the callback stops the run and reaches the caller unchanged; the
    // non-throwing variant reports it as CANCELLED.
    struct Stop : std::runtime_error {
        Stop() : std::runtime_error("stop requested by the host") {}
    };
    fs::path c = copy_table(fixtures, rel, tmp, "c");
    pc::Context ctx_c(c.string());
    pc::RunOptions throwing;
    throwing.on_progress([](const pc::Progress &) { throw Stop(); });
    checks++;
    try {
        (void)ctx_c.expire_snapshots(exec, expire_all(true), throwing);
        failures++;
        std::fprintf(stderr, "FAIL: callback exception not rethrown\n");
    } catch (const Stop &) {
        std::printf("  callback exception rethrown\n");
    }
    pc::Result<pc::Report> res = ctx_c.try_expire_snapshots(exec, expire_all(true), throwing);
    CHECK(!res && res.status() == pc::Status::Cancelled);
    CHECK(res.message().find("stop requested by the host") != std::string::npos);

    // Orphan files: dry run, a veto keeping one file, a throwing veto keeping everything.
    fs::path d = copy_table(fixtures, rel, tmp, "d");
    auto plant = [&](const char *name, size_t size) {
        fs::path p = d / name;
        FILE *f = std::fopen(p.c_str(), "wb");
        CHECK(f != nullptr);
        if (f == nullptr) return;
        std::fwrite(std::string(size, '0').data(), 1, size, f);
        std::fclose(f);
        fs::last_write_time(p, fs::last_write_time(p) - std::chrono::hours(72));
    };
    plant("f1=10/bucket-0/data-planted-orphan-0.parquet", 20);
    plant("manifest/manifest-planted-orphan-0", 10);
    pc::Context ctx_d(d.string());
    pc::OrphanConfig orphan_dry;
    orphan_dry.dry_run(true);
    pc::Report od = ctx_d.remove_orphan_files(exec, orphan_dry);
    CHECK(od.kind() == pc::ReportKind::RemoveOrphanFiles && od.dry_run() && od.total_files() == 2);
    // The table's own files are young but referenced: counted as referenced whatever their age;
    // the two planted files are the only unreferenced candidates.
    CHECK(od.referenced() > 0 && od.candidates() == od.referenced() + 2 && od.cutoff_ms() > 0 &&
          !od.json().empty());
    pc::OrphanConfig throwing_veto;
    throwing_veto.veto([](std::string_view) -> bool { throw std::runtime_error("veto failed"); });
    pc::Report ot = ctx_d.remove_orphan_files(exec, throwing_veto);
    CHECK(ot.total_files() == 0 && ot.vetoed() == 2);  // an exception keeps the file
    std::vector<std::string> asked;
    pc::OrphanConfig veto;
    veto.veto([&](std::string_view path) {
        asked.emplace_back(path);
        return path.substr(0, 6) == "f1=10/";
    });
    pc::Report ov = ctx_d.remove_orphan_files(exec, veto);
    CHECK(ov.vetoed() == 1 && ov.total_files() == 1 && ov.files(pc::FileClass::Manifest) == 1);
    CHECK(asked.size() == 2);
    CHECK(!fs::exists(d / "manifest/manifest-planted-orphan-0"));
    CHECK(fs::exists(d / "f1=10/bucket-0/data-planted-orphan-0.parquet"));
    pc::OrphanConfig recent;
    recent.older_than(std::chrono::system_clock::now());
    pc::Result<pc::Report> refused = ctx_d.try_remove_orphan_files(exec, recent);
    CHECK(!refused && refused.status() == pc::Status::InvalidArgument);

    // Partitions: an unknown key is refused, a drop commits, the files stay.
    pc::TableSummary before_d = ctx_d.summary(exec);
    pc::Result<pc::Report> bad_drop = ctx_d.try_drop_partitions(exec, {{{"nope", "1"}}});
    CHECK(!bad_drop && bad_drop.status() == pc::Status::InvalidArgument);
    pc::Report preview = ctx_d.preview_drop_partitions(exec, {{{"f1", "20"}}});
    CHECK(preview.dry_run() && preview.committed_snapshot_ids().empty());
    CHECK(ctx_d.summary(exec).latest_snapshot_id == before_d.latest_snapshot_id);
    pc::Report dp = ctx_d.drop_partitions(exec, {{{"f1", "20"}}});
    CHECK(!dp.dry_run() && dp.files_marked_deleted() == preview.files_marked_deleted());
    CHECK(dp.kind() == pc::ReportKind::DropPartitions);
    CHECK(dp.names() == std::vector<std::string>{"f1=20"});
    CHECK(dp.partitions().size() == 1 && dp.partitions()[0] == pc::PartitionValues{{"f1", "20"}});
    CHECK(dp.files_marked_deleted() > 0 && dp.total_files() == 0);
    CHECK(dp.committed_snapshot_ids() == std::vector<int64_t>{before_d.latest_snapshot_id + 1});
    CHECK(fs::exists(d / "f1=20"));
    pc::PartitionExpireConfig no_time;
    pc::Result<pc::Report> pe = ctx_d.try_expire_partitions(exec, no_time);
    CHECK(!pe && pe.status() == pc::Status::InvalidArgument);  // no expiration time anywhere

    // Tags, consumers, maintain.
    pc::Report dt = ctx_d.delete_tag(exec, "no-such-tag");
    CHECK(dt.kind() == pc::ReportKind::DeleteTag && dt.missing() == std::vector<std::string>{"no-such-tag"});
    pc::Report et = ctx_d.expire_tags(exec, 0, true);
    CHECK(et.kind() == pc::ReportKind::ExpireTags && et.expired_count() == 0);
    pc::Report ec = ctx_d.expire_consumers(exec, std::chrono::hours(1), true);
    CHECK(ec.kind() == pc::ReportKind::ExpireConsumers);
    // A negative expiration is refused, not taken as 0 (the table's own expiration).
    expect_error(pc::Status::InvalidArgument,
                 [&] { (void)ctx_d.expire_consumers(exec, std::chrono::milliseconds(-1), true); },
                 "negative consumer expiration");
    pc::MaintainConfig maintain_dry;
    maintain_dry.dry_run(true);
    pc::Report mt = ctx_d.maintain(exec, maintain_dry);
    CHECK(mt.kind() == pc::ReportKind::Maintain && mt.dry_run());
    for (const pc::ReportView &step : mt.steps()) std::printf("  maintain step %s\n", step.kind_name());
    CHECK(!mt.steps().empty());

    // Executors and contexts are shared by threads.
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; i++)
        threads.emplace_back([&] {
            if (ctx.try_summary(exec)) ok++;
        });
    for (auto &t : threads) t.join();
    CHECK(ok == 4);
}

}  // namespace

// A context on a branch (Context::create_on_branch): only that branch's snapshots expire.
void test_branch(const std::string &fixtures) {
    const std::string rel =
        "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch";
    std::printf("branch %s\n", rel.c_str());
    TempDir tmp("paimon-cleanup-cpp");
    pc::Executor exec(2);
    fs::path t = copy_table(fixtures, rel, tmp, "branch");
    pc::Context main_ctx(t.string());
    pc::Context branch = pc::Context::create_on_branch(t.string(), "test").value();
    pc::TableSummary main_before = main_ctx.summary(exec);
    pc::Report r = branch.expire_snapshots(exec, expire_all(false));
    CHECK(r.expired_count() == 1);
    pc::TableSummary b = branch.summary(exec);
    CHECK(b.snapshot_count == 1 && b.earliest_snapshot_id == 2);
    pc::TableSummary m = main_ctx.summary(exec);
    CHECK(m.snapshot_count == main_before.snapshot_count);
    CHECK(m.live_file_count == main_before.live_file_count);
    pc::Result<pc::Context> bad = pc::Context::create_on_branch(t.string(), "../x");
    CHECK(!bad && bad.status() == pc::Status::InvalidArgument);
}

// The tables of a warehouse (list_tables): a pattern picks them, sorted by name; each location
// opens with Context; no match, a pattern without '.' and an object-store URI are errors.
void test_warehouse(const std::string &fixtures) {
    std::printf("warehouse\n");
    TempDir tmp("paimon-cleanup-cpp");
    fs::create_directories(tmp.path / "wh" / "db.db");
    fs::create_directories(tmp.path / "wh" / "other.db");
    fs::path pk = copy_table(fixtures, "parquet/pk_09.db/pk_09", tmp, "wh/db.db/pk_09");
    (void)copy_table(fixtures, "parquet/pk_09.db/pk_09", tmp, "wh/other.db/pk_copy");
    (void)copy_table(fixtures,
                     "parquet/append_table_with_append_pt_branch.db/"
                     "append_table_with_append_pt_branch",
                     tmp, "wh/db.db/append");
    fs::create_directories(tmp.path / "wh" / "db.db" / "not_a_table" / "snapshot");
    const std::string wh = (tmp.path / "wh").string();

    std::vector<pc::WarehouseTable> all = pc::list_tables(wh);
    std::vector<std::string> names;
    for (const pc::WarehouseTable &t : all) names.push_back(t.name);
    CHECK((names == std::vector<std::string>{"db.append", "db.pk_09", "other.pk_copy"}));
    std::vector<pc::WarehouseTable> db = pc::list_tables(wh, "db.pk*");
    CHECK(db.size() == 1 && db[0].name == "db.pk_09");
    CHECK(db.size() == 1 && fs::equivalent(db[0].location, pk));
    if (!db.empty()) {
        pc::Executor exec(1);
        CHECK(pc::Context(db[0].location).summary(exec).has_snapshots);
    }
    CHECK(pc::list_tables(wh, "*.pk_copy").size() == 1);
    pc::Result<std::vector<pc::WarehouseTable>> none = pc::try_list_tables(wh, "db.nothing*");
    CHECK(!none && none.status() == pc::Status::NotFound);
    expect_error(pc::Status::InvalidArgument, [&] { (void)pc::list_tables(wh, "nodot"); },
                 "pattern without a dot");
    expect_error(pc::Status::Unsupported, [] { (void)pc::list_tables("s3://bucket/wh", "db.*"); },
                 "object-store warehouse");
}

int main() {
    try {
        test_basics();
        std::string fixtures = fixtures_dir();
        const char *require = std::getenv("PAIMON_REQUIRE_FIXTURES");
        if (fixtures.empty()) {
            bool required = require != nullptr && std::string(require) == "1";
            std::printf("%s: fixture tables not found\n", required ? "FAIL" : "SKIP");
            if (required) return 1;
            std::printf("test_cpp_wrapper: %d checks, %d failed\n", checks, failures);
            return failures == 0 ? 77 : 1;
        }
        test_fixture(fixtures);
        test_branch(fixtures);
        test_warehouse(fixtures);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "FAIL: uncaught exception: %s\n", e.what());
        return 1;
    }
    std::printf("test_cpp_wrapper: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
