/* Every handle kind is created and freed; every argument check reports the right status and a
 * message naming the argument. Needs no fixture. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "paimon_cleanup.h"
#include "test_util.h"

/* The summary struct's layout is part of the ABI. */
_Static_assert(sizeof(PaimonCleanupTableSummary) == 64, "PaimonCleanupTableSummary size");
_Static_assert(offsetof(PaimonCleanupTableSummary, earliest_snapshot_id) == 8, "layout");
_Static_assert(offsetof(PaimonCleanupTableSummary, live_file_bytes) == 56, "layout");
_Static_assert(sizeof(PaimonCleanupStatus) == 4, "status is 32-bit");
_Static_assert(sizeof(PaimonCleanupFileClass) == 4, "file class is 32-bit");
_Static_assert(sizeof(PaimonCleanupReportKind) == 4, "report kind is 32-bit");
/* The partition spec's layout is part of the ABI: three pointer-sized fields. */
_Static_assert(sizeof(PaimonCleanupPartitionSpec) == 3 * sizeof(void *), "spec size");
_Static_assert(offsetof(PaimonCleanupPartitionSpec, values) == sizeof(void *), "spec layout");
_Static_assert(offsetof(PaimonCleanupPartitionSpec, field_count) == 2 * sizeof(void *),
               "spec layout");
_Static_assert(PAIMON_CLEANUP_FILE_CLASS_OTHER == PAIMON_CLEANUP_FILE_CLASS_COUNT - 1,
               "file classes are 0..COUNT-1");

static void test_version(void) {
    CHECK(strcmp(paimon_cleanup_version(), PAIMON_CLEANUP_VERSION) == 0);
    CHECK_EQ_I64(paimon_cleanup_abi_version(), PAIMON_CLEANUP_ABI_VERSION);
}

static void test_status_names(void) {
    static const char *const names[] = {
        "ok",      "invalid_argument", "not_found", "malformed",    "unsupported",
        "storage", "path_refused",     "cancelled", "conflict",     "internal",
        "null_pointer", "invalid_utf8", "panic",  "memory_limit",
    };
    int i;
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_OK, 0);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, 1);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_NOT_FOUND, 2);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_MALFORMED, 3);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_UNSUPPORTED, 4);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_STORAGE, 5);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_PATH_REFUSED, 6);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_CANCELLED, 7);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_CONFLICT, 8);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_INTERNAL, 9);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_NULL_POINTER, 10);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_INVALID_UTF8, 11);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_PANIC, 12);
    CHECK_EQ_I64(PAIMON_CLEANUP_STATUS_MEMORY_LIMIT, 13);
    for (i = 0; i < 14; i++)
        CHECK_MSG(strcmp(paimon_cleanup_status_name(i), names[i]) == 0, "name of %d is %s", i,
                  paimon_cleanup_status_name(i));
    CHECK(strcmp(paimon_cleanup_status_name(14), "unknown") == 0);
    CHECK(strcmp(paimon_cleanup_status_name(-1), "unknown") == 0);
}

static void test_null_tolerance(void) {
    paimon_cleanup_error_free(NULL);
    paimon_cleanup_executor_free(NULL);
    paimon_cleanup_context_free(NULL);
    CHECK_EQ_I64(paimon_cleanup_error_status(NULL), PAIMON_CLEANUP_STATUS_OK);
    CHECK(paimon_cleanup_error_message(NULL) != NULL);
    CHECK(paimon_cleanup_error_message(NULL)[0] == '\0');
    CHECK_EQ_I64(paimon_cleanup_executor_worker_threads(NULL), 0);
    CHECK_EQ_I64(paimon_cleanup_executor_io_concurrency(NULL), 0);
    paimon_cleanup_expire_config_free(NULL);
    paimon_cleanup_orphan_config_free(NULL);
    paimon_cleanup_partition_expire_config_free(NULL);
    paimon_cleanup_maintain_config_free(NULL);
    paimon_cleanup_run_options_free(NULL);
    paimon_cleanup_cancel_token_free(NULL);
    paimon_cleanup_cancel_token_cancel(NULL);
    paimon_cleanup_report_free(NULL);
    CHECK(!paimon_cleanup_cancel_token_is_cancelled(NULL));
    CHECK_EQ_I64(paimon_cleanup_report_kind(NULL), PAIMON_CLEANUP_REPORT_KIND_NONE);
    CHECK(paimon_cleanup_report_json(NULL) != NULL && paimon_cleanup_report_json(NULL)[0] == '\0');
    CHECK(paimon_cleanup_report_step(NULL, 0) == NULL);
}

/* Every config handle: created, every setter with a good and (where there is one) a bad value,
 * NULL handles, freed. */
static void test_config_handles(void) {
    PaimonCleanupExpireConfig *ec = NULL;
    PaimonCleanupOrphanConfig *oc = NULL;
    PaimonCleanupPartitionExpireConfig *pc = NULL;
    PaimonCleanupMaintainConfig *mc = NULL;
    PaimonCleanupRunOptions *ro = NULL;
    PaimonCleanupCancelToken *tok = NULL;
    PaimonCleanupError *err = NULL;

    CHECK_OK(paimon_cleanup_expire_config_new(&ec, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_min(ec, 1, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_max(ec, 5, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_time_retained_ms(ec, 1000, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_older_than_ms(ec, 1000, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_max_expires(ec, 3, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_clean_empty_dirs(ec, true, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_dry_run(ec, true, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_refuse_if_tags_pin(ec, true, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_delete_all_changelogs(ec, true, &err), err);
    CHECK_ERROR(paimon_cleanup_expire_config_set_retain_min(ec, 0, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "retain_min");
    CHECK_ERROR(paimon_cleanup_expire_config_set_dry_run(NULL, true, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "config");
    paimon_cleanup_expire_config_free(ec);

    CHECK_OK(paimon_cleanup_orphan_config_new(&oc, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_older_than_ms(oc, 1000, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(oc, true, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_no_writers_running(oc, true, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_external_roots_owned(oc, true, &err), err);
    CHECK_ERROR(paimon_cleanup_orphan_config_set_external_roots_owned(NULL, true, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "config");
    CHECK_OK(paimon_cleanup_orphan_config_set_veto(oc, NULL, NULL, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_list_concurrency(oc, 0, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_delete_concurrency(oc, 16, &err), err);
    CHECK_ERROR(paimon_cleanup_orphan_config_set_delete_concurrency(oc, 5000, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "delete_concurrency");
    CHECK_ERROR(paimon_cleanup_orphan_config_set_veto(NULL, NULL, NULL, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "config");
    paimon_cleanup_orphan_config_free(oc);

    CHECK_OK(paimon_cleanup_partition_expire_config_new(&pc, &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_expiration_time_ms(pc, 1000, &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_strategy(
                 pc, PAIMON_CLEANUP_PARTITION_EXPIRE_STRATEGY_UPDATE_TIME, &err),
             err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_timestamp_formatter(pc, "yyyyMMdd", &err),
             err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_timestamp_formatter(pc, NULL, &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_timestamp_pattern(pc, "$dt", &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_max_expires(pc, 5, &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_batch_size(pc, 2, &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_dry_run(pc, true, &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_now_ms(pc, 1000, &err), err);
    CHECK_ERROR(paimon_cleanup_partition_expire_config_set_expiration_time_ms(pc, 0, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "expiration_time_ms");
    CHECK_ERROR(paimon_cleanup_partition_expire_config_set_batch_size(pc, 0, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "batch_size");
    CHECK_ERROR(paimon_cleanup_partition_expire_config_set_strategy(pc, -1, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "strategy");
    CHECK_ERROR(paimon_cleanup_partition_expire_config_set_timestamp_pattern(pc, "\xff", &err),
                PAIMON_CLEANUP_STATUS_INVALID_UTF8, err, "pattern");
    paimon_cleanup_partition_expire_config_free(pc);

    CHECK_OK(paimon_cleanup_maintain_config_new(&mc, &err), err);
    CHECK_OK(paimon_cleanup_maintain_config_set_dry_run(mc, true, &err), err);
    paimon_cleanup_maintain_config_free(mc);

    CHECK_OK(paimon_cleanup_run_options_new(&ro, &err), err);
    CHECK_OK(paimon_cleanup_cancel_token_new(&tok, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_cancel_token(ro, tok, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_progress(ro, NULL, NULL, &err), err);
    CHECK(!paimon_cleanup_cancel_token_is_cancelled(tok));
    paimon_cleanup_cancel_token_cancel(tok);
    paimon_cleanup_cancel_token_cancel(tok);
    CHECK(paimon_cleanup_cancel_token_is_cancelled(tok));
    paimon_cleanup_cancel_token_free(tok);
    CHECK_ERROR(paimon_cleanup_run_options_set_cancel_token(NULL, NULL, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "options");
    paimon_cleanup_run_options_free(ro);
}

static void test_executors(void) {
    static const uint32_t counts[] = {0, 1, 2, 8};
    size_t i;
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        exec = NULL;
        CHECK_OK(paimon_cleanup_executor_new(counts[i], &exec, &err), err);
        CHECK(exec != NULL);
        if (counts[i] == 0)
            CHECK(paimon_cleanup_executor_worker_threads(exec) >= 1);
        else
            CHECK_EQ_I64(paimon_cleanup_executor_worker_threads(exec), counts[i]);
        CHECK_EQ_I64(paimon_cleanup_executor_io_concurrency(exec), 0);
        CHECK_OK(paimon_cleanup_executor_set_io_concurrency(exec, 32, &err), err);
        CHECK_EQ_I64(paimon_cleanup_executor_io_concurrency(exec), 32);
        CHECK_ERROR(paimon_cleanup_executor_set_io_concurrency(exec, 100000, &err),
                    PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "io_concurrency");
        CHECK_EQ_I64(paimon_cleanup_executor_io_concurrency(exec), 32);
        CHECK_OK(paimon_cleanup_executor_set_io_concurrency(exec, 0, NULL), err);
        CHECK_EQ_I64(paimon_cleanup_executor_io_concurrency(exec), 0);
        paimon_cleanup_executor_free(exec);
    }

    exec = NULL;
    CHECK_ERROR(paimon_cleanup_executor_new(100000, &exec, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "worker_threads");
    CHECK(exec == NULL);
    CHECK_ERROR(paimon_cleanup_executor_new(1, NULL, &err), PAIMON_CLEANUP_STATUS_NULL_POINTER,
                err, "`out`");
    CHECK_ERROR(paimon_cleanup_executor_set_io_concurrency(NULL, 4, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "executor");
    /* err may be NULL: the status alone is returned. */
    CHECK_EQ_I64(paimon_cleanup_executor_new(1, NULL, NULL), PAIMON_CLEANUP_STATUS_NULL_POINTER);
}

static void test_contexts(void) {
    const char *keys[] = {"s3.region", "snapshot.num-retained.min", "s3.region"};
    const char *values[] = {"us-east-1", "3", "eu-west-1"};
    const char *null_in_keys[] = {"a", NULL};
    const char *bad_utf8 = "\xff\xfe/table";
    const char *bad_keys[] = {"ok", "\xc3\x28"};
    const char *bad_values[] = {"ok", "caf\xe9"};
    const char *empty_key[] = {""};
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;

    CHECK_OK(paimon_cleanup_context_new("/tmp/no/such/table", NULL, NULL, 0, &ctx, &err), err);
    CHECK(ctx != NULL);
    paimon_cleanup_context_free(ctx);
    ctx = NULL;
    CHECK_OK(paimon_cleanup_context_new("s3://bucket/wh/db.db/t", keys, values, 2, &ctx, &err),
             err);
    CHECK(ctx != NULL);
    paimon_cleanup_context_free(ctx);
    ctx = NULL;

    /* *err is always written: NULL on success, even if it held garbage. */
    err = (PaimonCleanupError *)(uintptr_t)0x1;
    CHECK_EQ_I64(paimon_cleanup_context_new("file:///tmp/t", NULL, NULL, 0, &ctx, &err),
                 PAIMON_CLEANUP_STATUS_OK);
    CHECK(err == NULL);
    paimon_cleanup_context_free(ctx);
    ctx = NULL;

    CHECK_ERROR(paimon_cleanup_context_new(NULL, NULL, NULL, 0, &ctx, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "table_uri");
    CHECK_ERROR(paimon_cleanup_context_new("/t", NULL, NULL, 0, NULL, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "`out`");
    CHECK_ERROR(paimon_cleanup_context_new("/t", NULL, values, 1, &ctx, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "option_keys");
    CHECK_ERROR(paimon_cleanup_context_new("/t", keys, NULL, 1, &ctx, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "option_values");
    CHECK_ERROR(paimon_cleanup_context_new("/t", null_in_keys, values, 2, &ctx, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "option_keys[1]");
    CHECK_ERROR(paimon_cleanup_context_new(bad_utf8, NULL, NULL, 0, &ctx, &err),
                PAIMON_CLEANUP_STATUS_INVALID_UTF8, err, "table_uri");
    CHECK_ERROR(paimon_cleanup_context_new("/t", bad_keys, values, 2, &ctx, &err),
                PAIMON_CLEANUP_STATUS_INVALID_UTF8, err, "option_keys[1]");
    CHECK_ERROR(paimon_cleanup_context_new("/t", keys, bad_values, 2, &ctx, &err),
                PAIMON_CLEANUP_STATUS_INVALID_UTF8, err, "UTF-8");
    CHECK_ERROR(paimon_cleanup_context_new("/t", keys, values, 3, &ctx, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "s3.region");
    CHECK_ERROR(paimon_cleanup_context_new("/t", empty_key, values, 1, &ctx, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "option_keys[0]");
    CHECK_ERROR(paimon_cleanup_context_new("", NULL, NULL, 0, &ctx, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "table_uri");
    CHECK(ctx == NULL);
}

static void test_summary_arguments(void) {
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary summary;
    CHECK_OK(paimon_cleanup_context_new("/tmp/paimon-cleanup-no-such-table", NULL, NULL, 0, &ctx,
                                        &err),
             err);
    CHECK_OK(paimon_cleanup_executor_new(1, &exec, &err), err);
    CHECK_ERROR(paimon_cleanup_table_summary(NULL, exec, &summary, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "`context`");
    CHECK_ERROR(paimon_cleanup_table_summary(ctx, NULL, &summary, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "`executor`");
    CHECK_ERROR(paimon_cleanup_table_summary(ctx, exec, NULL, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "`out`");
    CHECK_EQ_I64(paimon_cleanup_table_summary(ctx, exec, NULL, NULL),
                 PAIMON_CLEANUP_STATUS_NULL_POINTER);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
}

int main(void) {
    test_version();
    test_status_names();
    test_null_tolerance();
    test_config_handles();
    test_executors();
    test_contexts();
    test_summary_arguments();
    return tu_finish("test_handles");
}
