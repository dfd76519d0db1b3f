/* paimon_cleanup_table_summary on copies of Java-written tables, compared with the CLI's
 * `paimon-cleanup inspect <table> --json` and with the table's directory listing. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mini_json.h"
#include "paimon_cleanup.h"
#include "test_util.h"

static const char *const TABLES[] = {
    "orc/append_09.db/append_09",
    "parquet/pk_table_with_alter_table.db/pk_table_with_alter_table",
    /* has a branch besides main */
    "orc/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
};

static const char *cli_path(void) {
    const char *cli = getenv("PAIMON_CLEANUP_CLI");
    return (cli != NULL && cli[0] != '\0') ? cli : "target/release/paimon-cleanup";
}

static long long array_min(const mj_value *array) {
    long long best = 0;
    size_t i;
    for (i = 0; i < array->count; i++)
        if (i == 0 || array->items[i].integer < best) best = array->items[i].integer;
    return best;
}

static void compare_with_cli(const char *table, const PaimonCleanupTableSummary *s) {
    int exit_code = -1;
    char *cmd = tu_format("'%s' inspect '%s' --json", cli_path(), table);
    char *out = tu_run_capture(cmd, &exit_code);
    mj_value *json = NULL;
    const mj_value *snapshots, *tags, *branches, *live, *latest, *earliest, *bytes;
    int failures_before = tu_failures;

    if (out == NULL || exit_code != 0) {
        tu_fail(__FILE__, __LINE__, "`%s` failed (exit %d)", cmd, exit_code);
        goto done;
    }
    json = mj_parse(out);
    if (json == NULL || json->type != MJ_OBJECT) {
        tu_fail(__FILE__, __LINE__, "`%s` did not print a JSON object:\n%s", cmd, out);
        goto done;
    }
    snapshots = mj_get(json, "snapshots");
    tags = mj_get(json, "tags");
    branches = mj_get(json, "branches");
    live = mj_get(json, "live_files");
    latest = mj_get(json, "latest_snapshot_id");
    earliest = mj_get(json, "earliest_snapshot_id");
    bytes = mj_get(json, "live_file_bytes");
    CHECK_MSG(snapshots != NULL && snapshots->type == MJ_ARRAY, "inspect JSON lacks snapshots[]");
    CHECK_MSG(tags != NULL && tags->type == MJ_OBJECT, "inspect JSON lacks tags{}");
    CHECK_MSG(branches != NULL && branches->type == MJ_ARRAY, "inspect JSON lacks branches[]");
    CHECK_MSG(live != NULL && live->type == MJ_ARRAY, "inspect JSON lacks live_files[]");
    CHECK_MSG(latest != NULL, "inspect JSON lacks latest_snapshot_id");
    if (tu_failures > failures_before) goto done;

    CHECK_EQ_I64(s->snapshot_count, snapshots->count);
    CHECK_EQ_I64(s->has_snapshots, latest->type == MJ_NUMBER);
    if (latest->type == MJ_NUMBER) CHECK_EQ_I64(s->latest_snapshot_id, latest->integer);
    if (earliest != NULL && earliest->type == MJ_NUMBER)
        CHECK_EQ_I64(s->earliest_snapshot_id, earliest->integer);
    else if (snapshots->count > 0)
        CHECK_EQ_I64(s->earliest_snapshot_id, array_min(snapshots));
    CHECK_EQ_I64(s->tag_count, tags->count);
    /* "branches" lists main too; the summary counts the others. */
    CHECK_EQ_I64(s->branch_count + 1, branches->count);
    CHECK_EQ_I64(s->live_file_count, live->count);
    if (bytes != NULL && bytes->type == MJ_NUMBER) CHECK_EQ_I64(s->live_file_bytes, bytes->integer);
    printf("  CLI agrees: %zu snapshots, %zu tags, %zu branches, %zu live files\n",
           snapshots->count, tags->count, branches->count, live->count);

done:
    mj_free(json);
    free(out);
    free(cmd);
}

static void compare_with_listing(const char *table, const PaimonCleanupTableSummary *s) {
    char *dir = tu_format("%s/snapshot", table);
    int snapshot_files = tu_count_entries(dir, "snapshot-");
    long long newest = tu_max_numbered_entry(dir, "snapshot-");
    int tags, branches;
    free(dir);
    dir = tu_format("%s/tag", table);
    tags = tu_count_entries(dir, "tag-");
    free(dir);
    dir = tu_format("%s/branch", table);
    branches = tu_count_entries(dir, "branch-");
    free(dir);
    CHECK_EQ_I64(s->snapshot_count, snapshot_files);
    CHECK(s->has_snapshots);
    CHECK_EQ_I64(s->latest_snapshot_id, newest);
    CHECK(s->earliest_snapshot_id >= 1 && s->earliest_snapshot_id <= s->latest_snapshot_id);
    CHECK_EQ_I64(s->tag_count, tags < 0 ? 0 : tags);
    CHECK_EQ_I64(s->branch_count, branches < 0 ? 0 : branches);
    CHECK(s->live_file_count > 0);
    CHECK(s->live_file_bytes > 0);
}

/* Adds tag "nightly" pointing at the latest snapshot (a Paimon tag file is a snapshot file). */
static void add_tag(const char *table) {
    char *dir = tu_format("%s/snapshot", table);
    long long latest = tu_max_numbered_entry(dir, "snapshot-");
    char *cmd = tu_format("mkdir -p '%s/tag' && cp '%s/snapshot-%lld' '%s/tag/tag-nightly'", table,
                          dir, latest, table);
    CHECK(latest > 0);
    CHECK_MSG(system(cmd) == 0, "%s failed", cmd);
    free(cmd);
    free(dir);
}

static void check_table(const char *fixtures, const char *relative, PaimonCleanupExecutor *exec,
                        int with_tag) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, relative, &tmp);
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary s, again;
    int status;
    const char *keys[] = {"snapshot.num-retained.min"};
    const char *values[] = {"1"};

    printf("table %s%s\n", relative, with_tag ? " (+ tag nightly)" : "");
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", relative);
        return;
    }
    if (with_tag) add_tag(table);
    CHECK_OK(paimon_cleanup_context_new(table, keys, values, 1, &ctx, &err), err);
    memset(&s, 0xAB, sizeof s);
    status = paimon_cleanup_table_summary(ctx, exec, &s, &err);
    if (status != PAIMON_CLEANUP_STATUS_OK) {
        tu_fail(__FILE__, __LINE__, "summary of %s failed: %d (%s): %s", relative, status,
                paimon_cleanup_status_name(status), paimon_cleanup_error_message(err));
        paimon_cleanup_error_free(err);
        err = NULL;
    } else {
        CHECK(err == NULL);
        printf("  summary: snapshots %lld..%lld (%llu), tags %llu, branches %llu, "
               "live files %llu (%llu bytes)\n",
               (long long)s.earliest_snapshot_id, (long long)s.latest_snapshot_id,
               (unsigned long long)s.snapshot_count, (unsigned long long)s.tag_count,
               (unsigned long long)s.branch_count, (unsigned long long)s.live_file_count,
               (unsigned long long)s.live_file_bytes);
        compare_with_listing(table, &s);
        if (with_tag) CHECK_EQ_I64(s.tag_count, 1);
        compare_with_cli(table, &s);
        /* Read-only and repeatable. */
        CHECK_OK(paimon_cleanup_table_summary(ctx, exec, &again, &err), err);
        CHECK(memcmp(&s.earliest_snapshot_id, &again.earliest_snapshot_id,
                     sizeof s - offsetof(PaimonCleanupTableSummary, earliest_snapshot_id)) == 0);
        CHECK(s.has_snapshots == again.has_snapshots);
    }
    paimon_cleanup_context_free(ctx);
    tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

int main(void) {
    const char *fixtures = tu_fixtures_dir();
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    size_t i;
    if (fixtures == NULL) return tu_missing_fixtures("test_summary");
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    if (exec == NULL) return tu_finish("test_summary");
    for (i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) check_table(fixtures, TABLES[i], exec, i == 0);
    paimon_cleanup_executor_free(exec);
    return tu_finish("test_summary");
}
