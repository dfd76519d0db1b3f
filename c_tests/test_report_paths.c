/* A report listing more paths than the library keeps on its heap (4,096; the rest are read from
 * a mapped temporary file, issue 19) gives every path back through paimon_cleanup_report_path:
 * exactly the files that were deleted, in the order of the report's JSON listing, each pointer
 * valid (same address, same text) until the report is freed, whatever order they are read in.
 *
 * A copy of orc/pk_09 gets N_ORPHANS planted orphan files, three days old; a dry run lists them
 * and changes nothing, then a real run deletes them. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "mini_json.h"
#include "paimon_cleanup.h"
#include "test_util.h"

#define N_ORPHANS (2 * 4096 + 321)

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Plants the orphans, returns their table-relative names, sorted (malloc'ed). */
static char **plant(const char *table) {
    char **names = (char **)calloc(N_ORPHANS, sizeof *names);
    struct timeval old[2];
    int i;
    old[0].tv_sec = old[1].tv_sec = (time_t)(tu_now_ms() / 1000 - 3 * 24 * 3600);
    old[0].tv_usec = old[1].tv_usec = 0;
    for (i = 0; i < N_ORPHANS; i++) {
        char *full;
        names[i] = tu_format("f1=%d/bucket-0/data-orphan-%05d.orc", (i % 2) ? 10 : 20, i);
        full = tu_format("%s/%s", table, names[i]);
        CHECK_MSG(tu_write_file(full, "x") == 0, "cannot write %s", full);
        CHECK_MSG(utimes(full, old) == 0, "cannot age %s", full);
        free(full);
    }
    qsort(names, N_ORPHANS, sizeof *names, cmp_str);
    return names;
}

/* Checks report `r` against the planted names; `deleted`: the files must be gone, else there. */
static void check_listing(const PaimonCleanupReport *r, const char *table, char **names,
                          int deleted) {
    size_t n = paimon_cleanup_report_path_count(r), i;
    const char **first = NULL, **sorted = NULL;
    mj_value *json = NULL;
    const mj_value *listed = NULL;

    CHECK_EQ_I64(n, N_ORPHANS);
    CHECK_EQ_I64(paimon_cleanup_report_total_files(r), N_ORPHANS);
    if (n != N_ORPHANS) return;
    first = (const char **)calloc(n, sizeof *first);
    sorted = (const char **)calloc(n, sizeof *sorted);
    /* Read backwards first and keep every pointer. */
    for (i = n; i-- > 0;) first[i] = paimon_cleanup_report_path(r, i);
    /* Forwards: the same pointers; in the order of the JSON listing. */
    json = mj_parse(paimon_cleanup_report_json(r));
    listed = json ? mj_get(mj_get(json, "deletion"), "paths") : NULL;
    CHECK_MSG(listed != NULL && listed->type == MJ_ARRAY && listed->count == n,
              "the JSON lists the paths");
    for (i = 0; i < n; i++) {
        const char *p = paimon_cleanup_report_path(r, i);
        CHECK_MSG(p == first[i] && p != NULL, "path %zu moved or is NULL", i);
        if (p == NULL) continue;
        if (listed != NULL && listed->type == MJ_ARRAY && i < listed->count) {
            const mj_value *path = mj_get(&listed->items[i], "path");
            CHECK_MSG(path != NULL && path->string != NULL && strcmp(path->string, p) == 0,
                      "path %zu: %s is not the JSON's", i, p);
        }
        CHECK_MSG(paimon_cleanup_report_path_class(r, i) == PAIMON_CLEANUP_FILE_CLASS_DATA,
                  "class of %s", p);
        sorted[i] = p;
    }
    CHECK(paimon_cleanup_report_path(r, n) == NULL);
    /* Exactly the planted files, each deleted (or, in a dry run, still there). */
    qsort(sorted, n, sizeof *sorted, cmp_str);
    for (i = 0; i < n; i++) {
        char *full;
        if (sorted[i] == NULL || strcmp(sorted[i], names[i]) != 0) {
            tu_fail(__FILE__, __LINE__, "listed %s, planted %s", sorted[i] ? sorted[i] : "NULL",
                    names[i]);
            break;
        }
        full = tu_format("%s/%s", table, names[i]);
        CHECK_MSG(tu_exists(full) == !deleted, "%s: %s", full, deleted ? "not deleted" : "gone");
        free(full);
    }
    /* The first pointers still read the same text after everything else was read. */
    for (i = 0; i < n; i++)
        CHECK_MSG(strcmp(first[i], paimon_cleanup_report_path(r, i)) == 0, "path %zu changed", i);
    mj_free(json);
    free(sorted);
    free(first);
}

int main(void) {
    const char *fixtures = tu_fixtures_dir();
    char *tmp = NULL, *table, **names, *before, *after;
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupOrphanConfig *cfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    int i;

    if (fixtures == NULL) return tu_missing_fixtures("test_report_paths");
    table = tu_copy_fixture_table(fixtures, "orc/pk_09.db/pk_09", &tmp);
    CHECK(table != NULL);
    if (table == NULL) return tu_finish("test_report_paths");
    printf("report paths: %d orphans in a copy of orc/pk_09\n", N_ORPHANS);
    names = plant(table);
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    CHECK_OK(paimon_cleanup_context_new(table, NULL, NULL, 0, &ctx, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_new(&cfg, &err), err);

    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, true, &err), err);
    before = tu_list_tree(table, 1);
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    if (r != NULL) {
        CHECK(paimon_cleanup_report_dry_run(r));
        check_listing(r, table, names, 0);
    }
    paimon_cleanup_report_free(r);
    r = NULL;
    after = tu_list_tree(table, 1);
    CHECK_MSG(before && after && strcmp(before, after) == 0, "the dry run changed the table");
    free(before);
    free(after);

    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, false, &err), err);
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    if (r != NULL) check_listing(r, table, names, 1);
    paimon_cleanup_report_free(r);

    paimon_cleanup_orphan_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
    for (i = 0; i < N_ORPHANS; i++) free(names[i]);
    free(names);
    free(table);
    tu_remove_tree(tmp);
    free(tmp);
    return tu_finish("test_report_paths");
}
