/* Error paths of paimon_cleanup_table_summary: a missing table and a malformed snapshot file.
 * Checks the status code AND the message. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paimon_cleanup.h"
#include "test_util.h"

static void expect_summary_error(const char *table, PaimonCleanupExecutor *exec, int expected,
                                 const char *needle) {
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary s;
    int status;
    CHECK_OK(paimon_cleanup_context_new(table, NULL, NULL, 0, &ctx, &err), err);
    memset(&s, 0x5A, sizeof s);
    status = paimon_cleanup_table_summary(ctx, exec, &s, &err);
    printf("  %s -> %d (%s): %s\n", table, status, paimon_cleanup_status_name(status),
           paimon_cleanup_error_message(err));
    CHECK_ERROR(status, expected, err, needle);
    /* Nothing is written on failure. */
    CHECK(s.snapshot_count == 0x5A5A5A5A5A5A5A5AULL);
    paimon_cleanup_context_free(ctx);
}

static void test_missing_table(PaimonCleanupExecutor *exec) {
    char *tmp = tu_make_temp_dir();
    char *table = tu_format("%s/no_such_table", tmp);
    printf("missing table\n");
    expect_summary_error(table, exec, PAIMON_CLEANUP_STATUS_NOT_FOUND, "no_such_table");
    tu_remove_tree(tmp);
    free(table);
    free(tmp);
}

static void test_malformed_snapshot(const char *fixtures, PaimonCleanupExecutor *exec) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, "orc/append_09.db/append_09", &tmp);
    char *dir, *file, *name;
    long long latest;
    printf("malformed snapshot\n");
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy the fixture");
        return;
    }
    dir = tu_format("%s/snapshot", table);
    latest = tu_max_numbered_entry(dir, "snapshot-");
    CHECK(latest > 0);
    name = tu_format("snapshot-%lld", latest);
    file = tu_format("%s/%s", dir, name);
    CHECK(tu_write_file(file, "this is not a snapshot {\"id\": ") == 0);
    expect_summary_error(table, exec, PAIMON_CLEANUP_STATUS_MALFORMED, name);
    tu_remove_tree(tmp);
    free(file);
    free(name);
    free(dir);
    free(table);
    free(tmp);
}

int main(void) {
    const char *fixtures = tu_fixtures_dir();
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    if (exec == NULL) return tu_finish("test_errors");
    test_missing_table(exec);
    if (fixtures != NULL) test_malformed_snapshot(fixtures, exec);
    paimon_cleanup_executor_free(exec);
    if (fixtures == NULL) {
        if (tu_failures > 0) return tu_finish("test_errors");
        return tu_missing_fixtures("test_errors (malformed snapshot part)");
    }
    return tu_finish("test_errors");
}
