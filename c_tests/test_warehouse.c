/* paimon_cleanup_warehouse_list_tables over a filesystem-catalog warehouse built from copies of
 * Java-written tables: the pattern picks the tables, sorted, each location opens as a context;
 * bad arguments, object stores and patterns matching nothing are errors. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paimon_cleanup.h"
#include "test_util.h"

static const char *const TABLE = "orc/append_09.db/append_09";

/* Copies the fixture table to `<wh>/<db>.db/<name>`. */
static void place(const char *fixtures, const char *wh, const char *db, const char *name) {
    int exit_code = -1;
    char *cmd = tu_format("mkdir -p '%s/%s.db' && cp -R '%s/%s' '%s/%s.db/%s'", wh, db, fixtures,
                          TABLE, wh, db, name);
    free(tu_run_capture(cmd, &exit_code));
    CHECK_MSG(exit_code == 0, "`%s` failed", cmd);
    free(cmd);
}

int main(void) {
    const char *fixtures = tu_fixtures_dir();
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupTableList *list = NULL;
    PaimonCleanupError *err = NULL;
    char *wh, *junk;
    size_t i;
    int exit_code = -1;
    if (fixtures == NULL) return tu_missing_fixtures("test_warehouse");
    wh = tu_make_temp_dir();
    place(fixtures, wh, "db", "t2");
    place(fixtures, wh, "db", "t1");
    place(fixtures, wh, "db2", "t1");
    /* Neither a table (no schema/) nor a database (no .db suffix): never listed. */
    junk = tu_format("mkdir -p '%s/db.db/not_a_table/snapshot' '%s/scratch/t/schema'", wh, wh);
    free(tu_run_capture(junk, &exit_code));
    CHECK(exit_code == 0);
    free(junk);

    CHECK_OK(paimon_cleanup_warehouse_list_tables(wh, "db.*", &list, &err), err);
    CHECK(list != NULL);
    CHECK_EQ_I64(paimon_cleanup_table_list_count(list), 2);
    CHECK(strcmp(paimon_cleanup_table_list_name(list, 0), "db.t1") == 0);
    CHECK(strcmp(paimon_cleanup_table_list_name(list, 1), "db.t2") == 0);
    CHECK(paimon_cleanup_table_list_name(list, 2) == NULL);
    CHECK(paimon_cleanup_table_list_location(list, 2) == NULL);
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    for (i = 0; i < paimon_cleanup_table_list_count(list); i++) {
        const char *location = paimon_cleanup_table_list_location(list, i);
        char *expected = tu_format("%s/db.db/t%zu", wh, i + 1);
        PaimonCleanupContext *ctx = NULL;
        PaimonCleanupTableSummary s;
        CHECK_MSG(location != NULL && strcmp(location, expected) == 0, "location %zu: %s", i,
                  location ? location : "(null)");
        /* The location is a table location a context takes. */
        CHECK_OK(paimon_cleanup_context_new(location, NULL, NULL, 0, &ctx, &err), err);
        memset(&s, 0, sizeof s);
        CHECK_OK(paimon_cleanup_table_summary(ctx, exec, &s, &err), err);
        CHECK(s.has_snapshots);
        paimon_cleanup_context_free(ctx);
        free(expected);
    }
    paimon_cleanup_table_list_free(list);
    list = NULL;

    /* Every database, a file:// URI, an exact name. */
    {
        char *uri = tu_format("file://%s", wh);
        CHECK_OK(paimon_cleanup_warehouse_list_tables(uri, "*.*", &list, &err), err);
        CHECK_EQ_I64(paimon_cleanup_table_list_count(list), 3);
        CHECK(strcmp(paimon_cleanup_table_list_name(list, 2), "db2.t1") == 0);
        paimon_cleanup_table_list_free(list);
        list = NULL;
        CHECK_OK(paimon_cleanup_warehouse_list_tables(uri, "db2.t1", &list, &err), err);
        CHECK_EQ_I64(paimon_cleanup_table_list_count(list), 1);
        paimon_cleanup_table_list_free(list);
        list = NULL;
        free(uri);
    }

    /* Errors: nothing is handed out. */
    CHECK_ERROR(paimon_cleanup_warehouse_list_tables(NULL, "db.*", &list, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "warehouse");
    CHECK_ERROR(paimon_cleanup_warehouse_list_tables(wh, NULL, &list, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "pattern");
    CHECK_ERROR(paimon_cleanup_warehouse_list_tables(wh, "db.*", NULL, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "out");
    CHECK_ERROR(paimon_cleanup_warehouse_list_tables(wh, "nodot", &list, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "DB.TABLE");
    CHECK_ERROR(paimon_cleanup_warehouse_list_tables("s3://bucket/wh", "db.*", &list, &err),
                PAIMON_CLEANUP_STATUS_UNSUPPORTED, err, "local");
    CHECK_ERROR(paimon_cleanup_warehouse_list_tables(wh, "db.nothing*", &list, &err),
                PAIMON_CLEANUP_STATUS_NOT_FOUND, err, "no table matches");
    CHECK(list == NULL);
    /* Without an error object the status alone. */
    CHECK_EQ_I64(paimon_cleanup_warehouse_list_tables(wh, "nodot", &list, NULL),
                 PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT);
    /* NULL lists read as empty and free as a no-op. */
    CHECK_EQ_I64(paimon_cleanup_table_list_count(NULL), 0);
    CHECK(paimon_cleanup_table_list_name(NULL, 0) == NULL);
    CHECK(paimon_cleanup_table_list_location(NULL, 0) == NULL);
    paimon_cleanup_table_list_free(NULL);

    paimon_cleanup_executor_free(exec);
    tu_remove_tree(wh);
    free(wh);
    return tu_finish("test_warehouse");
}
