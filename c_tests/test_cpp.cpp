// The header used from C++: RAII ownership with std::unique_ptr, the status enum as a C++ enum,
// and the summary of a copied fixture table when fixtures are available.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "paimon_cleanup.h"
#include "test_util.h"

static_assert(std::is_standard_layout<PaimonCleanupTableSummary>::value, "plain struct");
static_assert(std::is_trivially_copyable<PaimonCleanupTableSummary>::value, "plain struct");
static_assert(sizeof(PaimonCleanupStatus) == sizeof(int32_t), "32-bit status");

namespace {

struct ErrorDeleter {
    void operator()(PaimonCleanupError *e) const { paimon_cleanup_error_free(e); }
};
struct ExecutorDeleter {
    void operator()(PaimonCleanupExecutor *e) const { paimon_cleanup_executor_free(e); }
};
struct ContextDeleter {
    void operator()(PaimonCleanupContext *c) const { paimon_cleanup_context_free(c); }
};
using Error = std::unique_ptr<PaimonCleanupError, ErrorDeleter>;
using Executor = std::unique_ptr<PaimonCleanupExecutor, ExecutorDeleter>;
using Context = std::unique_ptr<PaimonCleanupContext, ContextDeleter>;

Executor make_executor(uint32_t workers) {
    PaimonCleanupExecutor *raw = nullptr;
    PaimonCleanupError *err = nullptr;
    PaimonCleanupStatus status = paimon_cleanup_executor_new(workers, &raw, &err);
    Error guard(err);
    CHECK_MSG(status == PAIMON_CLEANUP_STATUS_OK, "executor_new: %s",
              paimon_cleanup_error_message(guard.get()));
    return Executor(raw);
}

Context make_context(const std::string &uri,
                     const std::vector<std::pair<std::string, std::string>> &options) {
    std::vector<const char *> keys, values;
    for (const auto &kv : options) {
        keys.push_back(kv.first.c_str());
        values.push_back(kv.second.c_str());
    }
    PaimonCleanupContext *raw = nullptr;
    PaimonCleanupError *err = nullptr;
    PaimonCleanupStatus status = paimon_cleanup_context_new(
        uri.c_str(), keys.data(), values.data(), keys.size(), &raw, &err);
    Error guard(err);
    CHECK_MSG(status == PAIMON_CLEANUP_STATUS_OK, "context_new: %s",
              paimon_cleanup_error_message(guard.get()));
    return Context(raw);
}

}  // namespace

int main() {
    CHECK(std::string(paimon_cleanup_version()) == PAIMON_CLEANUP_VERSION);
    CHECK(paimon_cleanup_abi_version() == PAIMON_CLEANUP_ABI_VERSION);

    Executor exec = make_executor(2);
    Context missing = make_context("/tmp/paimon-cleanup-cpp-missing", {{"a", "b"}});

    // Errors are owned by a unique_ptr and read from another thread.
    PaimonCleanupTableSummary summary{};
    PaimonCleanupError *raw_err = nullptr;
    PaimonCleanupStatus status =
        paimon_cleanup_table_summary(missing.get(), exec.get(), &summary, &raw_err);
    Error err(raw_err);
    CHECK(status != PAIMON_CLEANUP_STATUS_OK);
    CHECK(err != nullptr);
    std::string message;
    std::thread reader([&] { message = paimon_cleanup_error_message(err.get()); });
    reader.join();
    CHECK(!message.empty());
    CHECK(paimon_cleanup_error_status(err.get()) == status);
    std::printf("missing table: %s: %s\n", paimon_cleanup_status_name(status), message.c_str());

    const char *fixtures = tu_fixtures_dir();
    if (fixtures != nullptr) {
        char *tmp = nullptr;
        char *table = tu_copy_fixture_table(
            fixtures, "parquet/pk_table_with_alter_table.db/pk_table_with_alter_table", &tmp);
        CHECK(table != nullptr);
        if (table != nullptr) {
            Context ctx = make_context(table, {});
            PaimonCleanupError *e = nullptr;
            status = paimon_cleanup_table_summary(ctx.get(), exec.get(), &summary, &e);
            Error guard(e);
            CHECK_MSG(status == PAIMON_CLEANUP_STATUS_OK, "summary: %s",
                      paimon_cleanup_error_message(guard.get()));
            if (status == PAIMON_CLEANUP_STATUS_OK) {
                CHECK(summary.has_snapshots);
                CHECK(summary.live_file_count > 0);
                std::printf("summary: latest snapshot %lld, %llu live files\n",
                            static_cast<long long>(summary.latest_snapshot_id),
                            static_cast<unsigned long long>(summary.live_file_count));
            }
        }
        tu_remove_tree(tmp);
        std::free(table);
        std::free(tmp);
    } else {
        std::printf("note: no fixtures, summary of a real table not run\n");
    }
    return tu_finish("test_cpp");
}
