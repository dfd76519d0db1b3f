/* Branches through the C ABI: the context option `branch` (and a `<table>$branch_<name>` URI)
 * makes every call work on that branch. On a copy of a Java-written table with a branch:
 *   - snapshot expiry on branch `test` removes only that branch's old snapshot; main's
 *     snapshot files, and every data file and manifest main's snapshots read, stay;
 *   - the table summary of a branch context describes the branch;
 *   - a bad branch name is INVALID_ARGUMENT at context_new, a missing branch NOT_FOUND at the
 *     call, and a URI suffix that disagrees with the option is INVALID_ARGUMENT. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paimon_cleanup.h"
#include "test_util.h"

static const char *const TABLE =
    "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch";

static PaimonCleanupContext *branch_context(const char *uri, const char *branch) {
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    const char *keys[1] = {"branch"};
    const char *values[1];
    values[0] = branch;
    CHECK_OK(paimon_cleanup_context_new(uri, branch ? keys : NULL, branch ? values : NULL,
                                        branch ? 1 : 0, &ctx, &err),
             err);
    return ctx;
}

static PaimonCleanupExpireConfig *retain_one(void) {
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupError *err = NULL;
    CHECK_OK(paimon_cleanup_expire_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_min(cfg, 1, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_older_than_ms(cfg, tu_now_ms(), &err), err);
    return cfg;
}

/* Every file outside branch/ and snapshot/ (data, manifests, schemas, tags) but the manifest
 * lists (the branch's own snapshot has lists of its own), sorted. */
static char *shared_files(const char *table) {
    char *cmd = tu_format("cd '%s' && find . -type f ! -path './branch/*' ! -path './snapshot/*' "
                          "! -name 'manifest-list-*' | LC_ALL=C sort",
                          table);
    int exit_code = -1;
    char *out = tu_run_capture(cmd, &exit_code);
    CHECK_MSG(out != NULL && exit_code == 0, "`%s` failed", cmd);
    free(cmd);
    return out;
}

static void expire_on_branch(const char *fixtures, PaimonCleanupExecutor *exec, int by_suffix) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, TABLE, &tmp);
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupExpireConfig *cfg = retain_one();
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary summary, main_before, main_after;
    PaimonCleanupContext *main_ctx = NULL;
    char *main_snapshots_before = NULL, *main_snapshots_after = NULL;
    char *files_before = NULL, *files_after = NULL;
    char *main_snapshot_dir = NULL, *branch_dir = NULL, *uri = NULL;

    printf("expire on branch test (%s)\n", by_suffix ? "URI suffix" : "context option");
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", TABLE);
        goto done;
    }
    main_snapshot_dir = tu_format("%s/snapshot", table);
    branch_dir = tu_format("%s/branch/branch-test/snapshot", table);
    CHECK_EQ_I64(tu_count_entries(branch_dir, "snapshot-"), 2);
    main_snapshots_before = tu_list_tree(main_snapshot_dir, 1);
    main_ctx = branch_context(table, NULL);
    if (main_ctx != NULL) CHECK_OK(paimon_cleanup_table_summary(main_ctx, exec, &main_before, &err), err);
    files_before = shared_files(table);
    if (by_suffix) {
        uri = tu_format("%s$branch_test", table);
        ctx = branch_context(uri, NULL);
    } else {
        ctx = branch_context(table, "test");
    }
    if (ctx == NULL) goto done;

    CHECK_OK(paimon_cleanup_table_summary(ctx, exec, &summary, &err), err);
    CHECK(summary.has_snapshots);
    CHECK_EQ_I64(summary.snapshot_count, 2);

    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &report, &err), err);
    CHECK_EQ_I64(paimon_cleanup_report_expired_count(report), 1);
    CHECK_EQ_I64(tu_count_entries(branch_dir, "snapshot-"), 1);
    {
        char *first = tu_format("%s/snapshot-1", branch_dir);
        CHECK(!tu_exists(first));
        free(first);
    }

    /* main: snapshot files untouched (names, sizes, times), its files all present. */
    main_snapshots_after = tu_list_tree(main_snapshot_dir, 1);
    CHECK_MSG(strcmp(main_snapshots_before, main_snapshots_after) == 0,
              "main's snapshot directory changed");
    /* The branch's first snapshot read only files main's snapshots read too: no data file or
     * manifest may go (only the branch's own lists), and main reads as before. */
    files_after = shared_files(table);
    CHECK_MSG(strcmp(files_before, files_after) == 0, "files outside branch/ changed");
    if (main_ctx != NULL) {
        CHECK_OK(paimon_cleanup_table_summary(main_ctx, exec, &main_after, &err), err);
        CHECK_EQ_I64(main_after.snapshot_count, main_before.snapshot_count);
        CHECK_EQ_I64(main_after.live_file_count, main_before.live_file_count);
        CHECK_EQ_I64(main_after.live_file_bytes, main_before.live_file_bytes);
    }
    CHECK_OK(paimon_cleanup_table_summary(ctx, exec, &summary, &err), err);
    CHECK_EQ_I64(summary.snapshot_count, 1);
    CHECK_EQ_I64(summary.earliest_snapshot_id, 2);

done:
    paimon_cleanup_report_free(report);
    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_context_free(main_ctx);
    free(main_snapshots_before);
    free(main_snapshots_after);
    free(files_before);
    free(files_after);
    free(main_snapshot_dir);
    free(branch_dir);
    free(uri);
    if (tmp != NULL) tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

static void bad_branches(const char *fixtures, PaimonCleanupExecutor *exec) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, TABLE, &tmp);
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary summary;
    const char *keys[1] = {"branch"};
    const char *bad[3] = {"", "../x", "a/b"};
    char *uri = NULL;
    int i;

    printf("bad branch names\n");
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", TABLE);
        return;
    }
    for (i = 0; i < 3; i++) {
        const char *values[1];
        values[0] = bad[i];
        CHECK_ERROR(paimon_cleanup_context_new(table, keys, values, 1, &ctx, &err),
                    PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "branch");
        CHECK(ctx == NULL);
    }
    uri = tu_format("%s$branch_test", table);
    {
        const char *values[1] = {"other"};
        CHECK_ERROR(paimon_cleanup_context_new(uri, keys, values, 1, &ctx, &err),
                    PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "branch");
    }
    ctx = branch_context(table, "nosuch");
    if (ctx != NULL) {
        CHECK_ERROR(paimon_cleanup_table_summary(ctx, exec, &summary, &err),
                    PAIMON_CLEANUP_STATUS_NOT_FOUND, err, "nosuch");
    }
    paimon_cleanup_context_free(ctx);
    free(uri);
    tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

int main(void) {
    const char *fixtures = tu_fixtures_dir();
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    if (fixtures == NULL) return tu_missing_fixtures("test_branch");
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    if (exec == NULL) return tu_finish("test_branch");
    expire_on_branch(fixtures, exec, 0);
    expire_on_branch(fixtures, exec, 1);
    bad_branches(fixtures, exec);
    paimon_cleanup_executor_free(exec);
    return tu_finish("test_branch");
}
