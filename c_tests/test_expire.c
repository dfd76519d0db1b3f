/* paimon_cleanup_expire_snapshots through the C ABI on copies of Java-written tables:
 *   - a real run (retain min 1, older-than now) compared with the CLI
 *     `paimon-cleanup expire-snapshots <copy> --retain-min 1 --time-retained 0s --max-deletes 1000
 *     --json` run on a second copy: snapshots expired, id range, files and bytes per class, and
 *     the two copies' directory listings afterwards;
 *   - a dry run that changes nothing (listing with sizes and mtimes before == after) and lists
 *     exactly the paths the real run then deletes;
 *   - the progress callback;
 *   - cancellation from another thread before the run (CANCELLED, nothing changed) and from the
 *     progress callback during the run (CANCELLED; a rerun converges to the CLI's end state);
 *   - refuse-if-tags-pin (CONFLICT naming the tag, nothing changed);
 *   - errors: NULL arguments, retain min 0 (setter and table option), retain max < retain min,
 *     a cut-off in the future, a missing table. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mini_json.h"
#include "paimon_cleanup.h"
#include "test_util.h"

static const char *const TABLES[] = {
    /* primary-key table with compactions: data files, an index file and manifests expire */
    "orc/pk_09.db/pk_09",
    "parquet/pk_table_with_alter_table.db/pk_table_with_alter_table",
};

static const char *cli_path(void) {
    const char *cli = getenv("PAIMON_CLEANUP_CLI");
    return (cli != NULL && cli[0] != '\0') ? cli : "target/release/paimon-cleanup";
}

/* ---- progress callback --------------------------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock;
    int calls;
    int bad_calls; /* done > total, NULL or empty phase */
    uint64_t last_bytes;
    char first_phase[64];
    PaimonCleanupCancelToken *cancel_on_first_call; /* cancel from inside the callback */
} progress_state;

static void progress_init(progress_state *p) {
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
}

static void on_progress(void *user_data, const char *phase, uint64_t done, uint64_t total,
                        uint64_t bytes) {
    progress_state *p = (progress_state *)user_data;
    pthread_mutex_lock(&p->lock);
    if (p->calls == 0 && phase != NULL) snprintf(p->first_phase, sizeof p->first_phase, "%s", phase);
    p->calls++;
    if (phase == NULL || phase[0] == '\0' || (total != 0 && done > total)) p->bad_calls++;
    p->last_bytes = bytes;
    if (p->cancel_on_first_call != NULL) paimon_cleanup_cancel_token_cancel(p->cancel_on_first_call);
    pthread_mutex_unlock(&p->lock);
}

/* ---- helpers ------------------------------------------------------------------------------- */

static PaimonCleanupContext *make_context(const char *table) {
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    CHECK_OK(paimon_cleanup_context_new(table, NULL, NULL, 0, &ctx, &err), err);
    return ctx;
}

/* retain min 1, older-than now, at most 1000 expired: the CLI's
 * --retain-min 1 --time-retained 0s --max-deletes 1000. */
static PaimonCleanupExpireConfig *make_config(int dry_run) {
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupError *err = NULL;
    CHECK_OK(paimon_cleanup_expire_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_min(cfg, 1, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_older_than_ms(cfg, tu_now_ms(), &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_max_expires(cfg, 1000, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_dry_run(cfg, dry_run != 0, &err), err);
    return cfg;
}

static mj_value *run_cli(const char *table, int dry_run) {
    int exit_code = -1;
    char *cmd = tu_format("'%s' expire-snapshots '%s' --retain-min 1 --time-retained 0s "
                          "--max-deletes 1000 --json%s",
                          cli_path(), table, dry_run ? " --dry-run" : "");
    char *out = tu_run_capture(cmd, &exit_code);
    mj_value *json = NULL;
    if (out == NULL || exit_code != 0) {
        tu_fail(__FILE__, __LINE__, "`%s` failed (exit %d)", cmd, exit_code);
    } else {
        json = mj_parse(out);
        if (json == NULL || json->type != MJ_OBJECT)
            tu_fail(__FILE__, __LINE__, "`%s` did not print a JSON object:\n%s", cmd, out);
    }
    free(out);
    free(cmd);
    return json;
}

static long long json_int(const mj_value *object, const char *key, long long if_null) {
    const mj_value *v = mj_get(object, key);
    if (v == NULL) {
        tu_fail(__FILE__, __LINE__, "CLI JSON lacks \"%s\"", key);
        return -1;
    }
    return v->type == MJ_NUMBER ? v->integer : if_null;
}

/* The report agrees with the CLI's JSON: snapshots expired, id range, earliest after, files and
 * bytes of every class, failures, number of listed paths. */
static void compare_report_with_cli(const PaimonCleanupReport *r, const mj_value *json) {
    const mj_value *deletion = mj_get(json, "deletion");
    const mj_value *deleted = deletion != NULL ? mj_get(deletion, "deleted") : NULL;
    const mj_value *failed = deletion != NULL ? mj_get(deletion, "failed") : NULL;
    const mj_value *paths = deletion != NULL ? mj_get(deletion, "paths") : NULL;
    int c;
    size_t i;
    if (deleted == NULL || deleted->type != MJ_OBJECT || failed == NULL || paths == NULL) {
        tu_fail(__FILE__, __LINE__, "CLI JSON lacks deletion.deleted / failed / paths");
        return;
    }
    CHECK_EQ_I64(paimon_cleanup_report_expired_count(r), json_int(json, "snapshots_expired", -1));
    CHECK_EQ_I64(paimon_cleanup_report_has_expired_range(r),
                 json_int(json, "first_expired", 0) != 0);
    CHECK_EQ_I64(paimon_cleanup_report_first_expired_id(r), json_int(json, "first_expired", 0));
    CHECK_EQ_I64(paimon_cleanup_report_last_expired_id(r), json_int(json, "last_expired", 0));
    CHECK_EQ_I64(paimon_cleanup_report_has_earliest_after(r),
                 json_int(json, "earliest_after", 0) != 0);
    CHECK_EQ_I64(paimon_cleanup_report_earliest_after_id(r), json_int(json, "earliest_after", 0));
    CHECK_EQ_I64(paimon_cleanup_report_changelogs_written(r),
                 json_int(json, "changelogs_written", 0));
    /* Every class the CLI names is a class the header knows, with the same counts ... */
    for (i = 0; i < deleted->count; i++) {
        const char *name = deleted->keys[i];
        int found = 0;
        for (c = 0; c < PAIMON_CLEANUP_FILE_CLASS_COUNT; c++) {
            if (strcmp(paimon_cleanup_file_class_name(c), name) != 0) continue;
            found = 1;
            CHECK_EQ_I64(paimon_cleanup_report_files(r, c),
                         json_int(&deleted->items[i], "files", -1));
            CHECK_EQ_I64(paimon_cleanup_report_bytes(r, c),
                         json_int(&deleted->items[i], "bytes", -1));
        }
        CHECK_MSG(found, "CLI reports class \"%s\" the C header does not know", name);
    }
    /* ... and the classes it does not name are 0. */
    for (c = 0; c < PAIMON_CLEANUP_FILE_CLASS_COUNT; c++) {
        if (mj_get(deleted, paimon_cleanup_file_class_name(c)) != NULL) continue;
        CHECK_MSG(paimon_cleanup_report_files(r, c) == 0, "class %s: %llu files, CLI says none",
                  paimon_cleanup_file_class_name(c),
                  (unsigned long long)paimon_cleanup_report_files(r, c));
    }
    CHECK_EQ_I64(paimon_cleanup_report_failed_count(r), failed->count);
    CHECK_EQ_I64(paimon_cleanup_report_path_count(r), paths->count);
    CHECK_EQ_I64(paimon_cleanup_report_path_count(r), paimon_cleanup_report_total_files(r));
}

static void print_report(const char *what, const PaimonCleanupReport *r) {
    int c;
    printf("  %s: %s%s, %llu snapshots expired", what,
           paimon_cleanup_report_kind_name(paimon_cleanup_report_kind(r)),
           paimon_cleanup_report_dry_run(r) ? " (dry run)" : "",
           (unsigned long long)paimon_cleanup_report_expired_count(r));
    if (paimon_cleanup_report_has_expired_range(r))
        printf(" (%lld..%lld)", (long long)paimon_cleanup_report_first_expired_id(r),
               (long long)paimon_cleanup_report_last_expired_id(r));
    printf(", %llu files / %llu bytes:", (unsigned long long)paimon_cleanup_report_total_files(r),
           (unsigned long long)paimon_cleanup_report_total_bytes(r));
    for (c = 0; c < PAIMON_CLEANUP_FILE_CLASS_COUNT; c++)
        if (paimon_cleanup_report_files(r, c) > 0)
            printf(" %s=%llu", paimon_cleanup_file_class_name(c),
                   (unsigned long long)paimon_cleanup_report_files(r, c));
    printf("\n");
}

/* ---- the scenarios ------------------------------------------------------------------------- */

static void *cancel_thread(void *token) {
    paimon_cleanup_cancel_token_cancel((PaimonCleanupCancelToken *)token);
    return NULL;
}

/* A token cancelled by another thread before the run: CANCELLED, nothing changed. */
static void check_cancel_before(const char *table, PaimonCleanupExecutor *exec) {
    PaimonCleanupContext *ctx = make_context(table);
    PaimonCleanupExpireConfig *cfg = make_config(0);
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupCancelToken *token = NULL;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    progress_state progress;
    pthread_t thread;
    char *before = tu_list_tree(table, 1), *after;

    progress_init(&progress);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    CHECK_OK(paimon_cleanup_cancel_token_new(&token, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_cancel_token(opts, token, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_progress(opts, on_progress, &progress, &err), err);
    CHECK(!paimon_cleanup_cancel_token_is_cancelled(token));
    CHECK(pthread_create(&thread, NULL, cancel_thread, token) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(paimon_cleanup_cancel_token_is_cancelled(token));
    /* The options keep the flag: the token handle can go. */
    paimon_cleanup_cancel_token_free(token);
    CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, exec, cfg, opts, &report, &err),
                PAIMON_CLEANUP_STATUS_CANCELLED, err, "cancel");
    CHECK(report == NULL);
    CHECK_EQ_I64(progress.calls, 0);
    after = tu_list_tree(table, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "a cancelled run changed the table");
    printf("  cancelled before the run: CANCELLED, table unchanged\n");
    free(before);
    free(after);
    pthread_mutex_destroy(&progress.lock);
    paimon_cleanup_run_options_free(opts);
    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
}

/* A tag on the oldest snapshot with refuse-if-tags-pin: CONFLICT naming the tag, nothing
 * changed. Uses its own copy. */
static void check_refuse_if_tags_pin(const char *fixtures, const char *relative,
                                     PaimonCleanupExecutor *exec) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, relative, &tmp);
    PaimonCleanupContext *ctx;
    PaimonCleanupExpireConfig *cfg;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    char *cmd, *before, *after;
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", relative);
        return;
    }
    cmd = tu_format("mkdir -p '%s/tag' && cp '%s/snapshot/snapshot-1' '%s/tag/tag-pinned'", table,
                    table, table);
    CHECK_MSG(system(cmd) == 0, "%s failed", cmd);
    free(cmd);
    ctx = make_context(table);
    cfg = make_config(0);
    before = tu_list_tree(table, 1);
    CHECK_OK(paimon_cleanup_expire_config_set_refuse_if_tags_pin(cfg, true, &err), err);
    CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &report, &err),
                PAIMON_CLEANUP_STATUS_CONFLICT, err, "pinned");
    CHECK(report == NULL);
    after = tu_list_tree(table, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "a refused run changed the table");
    /* Without the flag the run goes ahead; the tag keeps snapshot 1's files. */
    CHECK_OK(paimon_cleanup_expire_config_set_refuse_if_tags_pin(cfg, false, &err), err);
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &report, &err), err);
    CHECK(report != NULL && paimon_cleanup_report_expired_count(report) > 0);
    printf("  refuse-if-tags-pin: CONFLICT and unchanged; without it %llu snapshots expire\n",
           (unsigned long long)paimon_cleanup_report_expired_count(report));
    paimon_cleanup_report_free(report);
    free(before);
    free(after);
    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

/* The memory bound (paimon_cleanup_run_options_set_max_memory): a run whose plan needs more
 * fails with MEMORY_LIMIT naming max_memory and deletes nothing; 0 removes the bound; an
 * ample bound deletes what the unbounded run deletes. Uses its own copies. */
static void check_max_memory(const char *fixtures, const char *relative,
                             PaimonCleanupExecutor *exec) {
    char *tmp = NULL, *tmp_free = NULL;
    char *table = tu_copy_fixture_table(fixtures, relative, &tmp);
    char *free_table = tu_copy_fixture_table(fixtures, relative, &tmp_free);
    PaimonCleanupContext *ctx, *free_ctx;
    PaimonCleanupExpireConfig *cfg;
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupReport *report = NULL, *free_report = NULL;
    PaimonCleanupError *err = NULL;
    char *before, *after, *after_free;
    const uint64_t bounds[] = {1, 512};
    size_t i;
    if (table == NULL || free_table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", relative);
        return;
    }
    ctx = make_context(table);
    free_ctx = make_context(free_table);
    cfg = make_config(0);
    before = tu_list_tree(table, 1);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    CHECK_ERROR(paimon_cleanup_run_options_set_max_memory(NULL, 1, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "options");
    for (i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        CHECK_OK(paimon_cleanup_run_options_set_max_memory(opts, bounds[i], &err), err);
        CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, exec, cfg, opts, &report, &err),
                    PAIMON_CLEANUP_STATUS_MEMORY_LIMIT, err, "max_memory");
        CHECK(report == NULL);
        after = tu_list_tree(table, 1);
        CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
                  "a run stopped by a %llu-byte bound changed the table",
                  (unsigned long long)bounds[i]);
        if (before != NULL && after != NULL && strcmp(before, after) != 0)
            tu_print_first_difference(before, after);
        free(after);
    }
    /* 0 removes the bound; an ample one changes nothing about the run. */
    CHECK_OK(paimon_cleanup_run_options_set_max_memory(opts, 0, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_max_memory(opts, (uint64_t)256 << 20, &err), err);
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, cfg, opts, &report, &err), err);
    CHECK_OK(paimon_cleanup_expire_snapshots(free_ctx, exec, cfg, NULL, &free_report, &err), err);
    CHECK(report != NULL && free_report != NULL);
    if (report != NULL && free_report != NULL) {
        CHECK(paimon_cleanup_report_total_files(report) > 0);
        CHECK_EQ_I64(paimon_cleanup_report_total_files(report),
                     paimon_cleanup_report_total_files(free_report));
        CHECK_EQ_I64(paimon_cleanup_report_expired_count(report),
                     paimon_cleanup_report_expired_count(free_report));
    }
    after = tu_list_tree(table, 0);
    after_free = tu_list_tree(free_table, 0);
    CHECK_MSG(after != NULL && after_free != NULL && strcmp(after, after_free) == 0,
              "the bounded run's table differs from the unbounded run's");
    printf("  max_memory: 1 and 512 bytes refused, table unchanged; 256 MiB deleted %llu files, "
           "as unbounded\n",
           report != NULL ? (unsigned long long)paimon_cleanup_report_total_files(report) : 0ULL);
    paimon_cleanup_report_free(report);
    paimon_cleanup_report_free(free_report);
    free(before);
    free(after);
    free(after_free);
    paimon_cleanup_run_options_free(opts);
    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_context_free(free_ctx);
    tu_remove_tree(tmp);
    tu_remove_tree(tmp_free);
    free(tmp);
    free(tmp_free);
    free(table);
    free(free_table);
}

/* Cancelled from the progress callback during the run, then rerun to completion: the end state
 * equals the CLI copy's. */
static void check_cancel_during_then_converge(const char *fixtures, const char *relative,
                                              const char *cli_table, PaimonCleanupExecutor *exec) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, relative, &tmp);
    PaimonCleanupContext *ctx;
    PaimonCleanupExpireConfig *cfg;
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupCancelToken *token = NULL;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    progress_state progress;
    char *ours, *theirs;
    int status;
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", relative);
        return;
    }
    ctx = make_context(table);
    cfg = make_config(0);
    progress_init(&progress);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    CHECK_OK(paimon_cleanup_cancel_token_new(&token, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_cancel_token(opts, token, &err), err);
    progress.cancel_on_first_call = token;
    CHECK_OK(paimon_cleanup_run_options_set_progress(opts, on_progress, &progress, &err), err);
    status = paimon_cleanup_expire_snapshots(ctx, exec, cfg, opts, &report, &err);
    /* The first progress call comes after the first batch; a table with one batch of data files
     * may still finish, but for these tables later phases exist. */
    CHECK_ERROR(status, PAIMON_CLEANUP_STATUS_CANCELLED, err, NULL);
    CHECK(report == NULL);
    CHECK_EQ_I64(progress.calls, 1);
    paimon_cleanup_report_free(report);
    report = NULL;
    /* Rerun without the cancelled token. */
    CHECK_OK(paimon_cleanup_run_options_set_cancel_token(opts, NULL, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_progress(opts, NULL, NULL, &err), err);
    paimon_cleanup_expire_config_free(cfg);
    cfg = make_config(0);
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, cfg, opts, &report, &err), err);
    ours = tu_list_tree(table, 0);
    theirs = tu_list_tree(cli_table, 0);
    CHECK_MSG(ours != NULL && theirs != NULL && strcmp(ours, theirs) == 0,
              "after cancel + rerun the table differs from the CLI's result");
    if (ours != NULL && theirs != NULL && strcmp(ours, theirs) != 0)
        tu_print_first_difference(ours, theirs);
    printf("  cancelled from the progress callback (phase \"%s\"), rerun converges to the CLI's "
           "end state\n",
           progress.first_phase);
    free(ours);
    free(theirs);
    paimon_cleanup_report_free(report);
    paimon_cleanup_cancel_token_free(token);
    paimon_cleanup_run_options_free(opts);
    pthread_mutex_destroy(&progress.lock);
    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

static void check_table(const char *fixtures, const char *relative, PaimonCleanupExecutor *exec) {
    char *tmp_a = NULL, *tmp_b = NULL;
    char *a = tu_copy_fixture_table(fixtures, relative, &tmp_a);
    char *b = tu_copy_fixture_table(fixtures, relative, &tmp_b);
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupExpireConfig *dry = NULL, *real = NULL;
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupReport *dry_report = NULL, *report = NULL, *again = NULL;
    PaimonCleanupError *err = NULL;
    mj_value *cli_dry = NULL, *cli = NULL;
    progress_state progress;
    char *before = NULL, *after = NULL, *listing_a = NULL, *listing_b = NULL;
    size_t i;

    printf("table %s\n", relative);
    progress_init(&progress);
    if (a == NULL || b == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", relative);
        goto done;
    }
    ctx = make_context(a);
    dry = make_config(1);
    real = make_config(0);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_progress(opts, on_progress, &progress, &err), err);

    /* 0. Cancelled before the run: nothing changes. */
    check_cancel_before(a, exec);

    /* 1. Dry run: nothing changes (not even an mtime), every listed path exists. */
    before = tu_list_tree(a, 1);
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, dry, opts, &dry_report, &err), err);
    after = tu_list_tree(a, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "the dry run changed the table");
    if (dry_report == NULL) goto done;
    print_report("dry run", dry_report);
    CHECK(paimon_cleanup_report_dry_run(dry_report));
    CHECK_EQ_I64(paimon_cleanup_report_kind(dry_report), PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS);
    CHECK(paimon_cleanup_report_expired_count(dry_report) > 0);
    CHECK(paimon_cleanup_report_path_count(dry_report) > 0);
    CHECK(paimon_cleanup_report_files(dry_report, PAIMON_CLEANUP_FILE_CLASS_SNAPSHOT_META) ==
          paimon_cleanup_report_expired_count(dry_report));
    CHECK_EQ_I64(paimon_cleanup_report_dirs_removed(dry_report), 0);
    for (i = 0; i < paimon_cleanup_report_path_count(dry_report); i++) {
        const char *path = paimon_cleanup_report_path(dry_report, i);
        char *full = tu_format("%s/%s", a, path != NULL ? path : "(null)");
        CHECK_MSG(path != NULL && tu_exists(full), "dry-run path %zu (%s) does not exist", i,
                  path != NULL ? path : "NULL");
        CHECK((int)paimon_cleanup_report_path_class(dry_report, i) >= 0 &&
              (int)paimon_cleanup_report_path_class(dry_report, i) <
                  PAIMON_CLEANUP_FILE_CLASS_COUNT);
        free(full);
    }
    CHECK(paimon_cleanup_report_path(dry_report, paimon_cleanup_report_path_count(dry_report)) ==
          NULL);
    cli_dry = run_cli(b, 1);
    if (cli_dry != NULL) compare_report_with_cli(dry_report, cli_dry);
    CHECK_MSG(progress.calls > 0, "the progress callback was not called in the dry run");
    printf("  dry run: table unchanged, %zu paths listed, agrees with the CLI's --dry-run; "
           "%d progress calls (first phase \"%s\")\n",
           paimon_cleanup_report_path_count(dry_report), progress.calls, progress.first_phase);

    /* 2. The real run, compared with the CLI on the second copy. */
    progress.calls = 0;
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, real, opts, &report, &err), err);
    cli = run_cli(b, 0);
    if (report == NULL) goto done;
    print_report("real run", report);
    CHECK(!paimon_cleanup_report_dry_run(report));
    CHECK_EQ_I64(paimon_cleanup_report_failed_count(report), 0);
    CHECK(paimon_cleanup_report_failed_path(report, 0) == NULL);
    CHECK(paimon_cleanup_report_files(report, PAIMON_CLEANUP_FILE_CLASS_DATA) > 0);
    if (cli != NULL) compare_report_with_cli(report, cli);
    CHECK_MSG(progress.calls > 0, "the progress callback was not called");
    CHECK_EQ_I64(progress.bad_calls, 0);
    CHECK_EQ_I64(progress.last_bytes, paimon_cleanup_report_total_bytes(report));
    /* The dry run listed exactly what the real run deleted; all of it is gone. */
    CHECK_EQ_I64(paimon_cleanup_report_path_count(report),
                 paimon_cleanup_report_path_count(dry_report));
    for (i = 0; i < paimon_cleanup_report_path_count(report); i++) {
        const char *path = paimon_cleanup_report_path(report, i);
        char *full = tu_format("%s/%s", a, path);
        CHECK_MSG(!tu_exists(full), "deleted path %s still exists", path);
        CHECK(strcmp(path, paimon_cleanup_report_path(dry_report, i)) == 0);
        CHECK_EQ_I64(paimon_cleanup_report_path_class(report, i),
                     paimon_cleanup_report_path_class(dry_report, i));
        free(full);
    }
    for (i = 0; i < (size_t)PAIMON_CLEANUP_FILE_CLASS_COUNT; i++) {
        CHECK_EQ_I64(paimon_cleanup_report_files(report, (int32_t)i),
                     paimon_cleanup_report_files(dry_report, (int32_t)i));
        CHECK_EQ_I64(paimon_cleanup_report_bytes(report, (int32_t)i),
                     paimon_cleanup_report_bytes(dry_report, (int32_t)i));
    }
    /* Both copies end up identical. */
    listing_a = tu_list_tree(a, 0);
    listing_b = tu_list_tree(b, 0);
    CHECK_MSG(listing_a != NULL && listing_b != NULL && strcmp(listing_a, listing_b) == 0,
              "the C ABI run and the CLI run left different tables");
    if (listing_a != NULL && listing_b != NULL && strcmp(listing_a, listing_b) != 0)
        tu_print_first_difference(listing_a, listing_b);
    printf("  real run agrees with the CLI (counts, bytes, ids, end state)\n");

    /* 3. A second run has nothing left to do. */
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, real, NULL, &again, &err), err);
    CHECK_EQ_I64(paimon_cleanup_report_expired_count(again), 0);
    CHECK_EQ_I64(paimon_cleanup_report_total_files(again), 0);
    CHECK(!paimon_cleanup_report_has_expired_range(again));
    CHECK(paimon_cleanup_report_has_earliest_after(again));
    CHECK_EQ_I64(paimon_cleanup_report_earliest_after_id(again),
                 paimon_cleanup_report_earliest_after_id(report));

    /* 4. Cancelled during the run; refuse-if-tags-pin. */
    check_cancel_during_then_converge(fixtures, relative, b, exec);
    check_refuse_if_tags_pin(fixtures, relative, exec);

done:
    mj_free(cli_dry);
    mj_free(cli);
    free(before);
    free(after);
    free(listing_a);
    free(listing_b);
    paimon_cleanup_report_free(dry_report);
    paimon_cleanup_report_free(report);
    paimon_cleanup_report_free(again);
    paimon_cleanup_run_options_free(opts);
    paimon_cleanup_expire_config_free(dry);
    paimon_cleanup_expire_config_free(real);
    paimon_cleanup_context_free(ctx);
    pthread_mutex_destroy(&progress.lock);
    tu_remove_tree(tmp_a);
    tu_remove_tree(tmp_b);
    free(tmp_a);
    free(tmp_b);
    free(a);
    free(b);
}

/* Host threads sharing one context, executor, config and run options run dry-run expiries at
 * once; the shared progress callback sees calls from all of them; every run reports the same. */
typedef struct {
    PaimonCleanupContext *ctx;
    PaimonCleanupExecutor *exec;
    PaimonCleanupExpireConfig *cfg;
    PaimonCleanupRunOptions *opts;
    uint64_t total_files;
    int status;
} shared_run;

static void *run_shared(void *arg) {
    shared_run *run = (shared_run *)arg;
    PaimonCleanupReport *r = NULL;
    run->status = paimon_cleanup_expire_snapshots(run->ctx, run->exec, run->cfg, run->opts, &r, NULL);
    run->total_files = paimon_cleanup_report_total_files(r);
    paimon_cleanup_report_free(r);
    return NULL;
}

static void check_concurrent_dry_runs(const char *fixtures, PaimonCleanupExecutor *exec) {
    enum { THREADS = 4 };
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, TABLES[0], &tmp);
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupError *err = NULL;
    progress_state progress;
    shared_run runs[THREADS];
    pthread_t threads[THREADS];
    char *before, *after;
    int i;

    printf("concurrent dry runs\n");
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", TABLES[0]);
        return;
    }
    progress_init(&progress);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_progress(opts, on_progress, &progress, &err), err);
    runs[0].ctx = make_context(table);
    runs[0].cfg = make_config(1);
    before = tu_list_tree(table, 1);
    for (i = 0; i < THREADS; i++) {
        runs[i] = runs[0];
        runs[i].exec = exec;
        runs[i].opts = opts;
        runs[i].status = -1;
        CHECK(pthread_create(&threads[i], NULL, run_shared, &runs[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
    for (i = 0; i < THREADS; i++) {
        CHECK_EQ_I64(runs[i].status, PAIMON_CLEANUP_STATUS_OK);
        CHECK(runs[i].total_files > 0);
        CHECK_EQ_I64(runs[i].total_files, runs[0].total_files);
    }
    CHECK(progress.calls >= THREADS);
    CHECK_EQ_I64(progress.bad_calls, 0);
    after = tu_list_tree(table, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "concurrent dry runs changed the table");
    printf("  %d threads, one context/executor/config/run options: %llu files each, %d progress "
           "calls, table unchanged\n",
           THREADS, (unsigned long long)runs[0].total_files, progress.calls);
    free(before);
    free(after);
    paimon_cleanup_expire_config_free(runs[0].cfg);
    paimon_cleanup_context_free(runs[0].ctx);
    paimon_cleanup_run_options_free(opts);
    pthread_mutex_destroy(&progress.lock);
    tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

/* Argument and setting errors. */
static void check_errors(const char *fixtures, PaimonCleanupExecutor *exec) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, TABLES[0], &tmp);
    PaimonCleanupContext *ctx = NULL, *missing = NULL, *bad_option = NULL;
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    const char *keys[] = {"snapshot.num-retained.min"};
    const char *values[] = {"0"};
    char *before, *after, *missing_path;

    printf("errors\n");
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", TABLES[0]);
        return;
    }
    before = tu_list_tree(table, 1);
    ctx = make_context(table);
    cfg = make_config(0);

    /* NULL handles and out-parameters. */
    CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, exec, NULL, NULL, &report, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "config");
    CHECK_ERROR(paimon_cleanup_expire_snapshots(NULL, exec, cfg, NULL, &report, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "context");
    CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, NULL, cfg, NULL, &report, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "executor");
    CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, NULL, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "out");
    CHECK_EQ_I64(paimon_cleanup_expire_snapshots(ctx, exec, NULL, NULL, &report, NULL),
                 PAIMON_CLEANUP_STATUS_NULL_POINTER);
    CHECK_ERROR(paimon_cleanup_expire_config_new(NULL, &err), PAIMON_CLEANUP_STATUS_NULL_POINTER,
                err, "out");
    CHECK_ERROR(paimon_cleanup_expire_config_set_retain_min(NULL, 1, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "config");
    CHECK_ERROR(paimon_cleanup_run_options_set_progress(NULL, on_progress, NULL, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "options");
    CHECK_ERROR(paimon_cleanup_run_options_new(NULL, &err), PAIMON_CLEANUP_STATUS_NULL_POINTER,
                err, "out");
    CHECK_ERROR(paimon_cleanup_cancel_token_new(NULL, &err), PAIMON_CLEANUP_STATUS_NULL_POINTER,
                err, "out");

    /* Out-of-range settings: refused by the setter, the config keeps its previous value. */
    CHECK_ERROR(paimon_cleanup_expire_config_set_retain_min(cfg, 0, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "retain_min = 0");
    CHECK_ERROR(paimon_cleanup_expire_config_set_retain_max(cfg, -3, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "retain_max");
    CHECK_ERROR(paimon_cleanup_expire_config_set_max_expires(cfg, 0, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "max_expires");
    CHECK_ERROR(paimon_cleanup_expire_config_set_older_than_ms(cfg, -1, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "older_than_ms");

    /* Retain min 0 through the table options: refused when the run starts. */
    CHECK_OK(paimon_cleanup_context_new(table, keys, values, 1, &bad_option, &err), err);
    {
        PaimonCleanupExpireConfig *defaults = NULL;
        CHECK_OK(paimon_cleanup_expire_config_new(&defaults, &err), err);
        CHECK_ERROR(paimon_cleanup_expire_snapshots(bad_option, exec, defaults, NULL, &report, &err),
                    PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "retain min must be at least 1");
        paimon_cleanup_expire_config_free(defaults);
    }

    /* Retain max below retain min. */
    CHECK_OK(paimon_cleanup_expire_config_set_retain_min(cfg, 5, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_max(cfg, 2, &err), err);
    CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &report, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "retain max");
    CHECK_OK(paimon_cleanup_expire_config_set_retain_max(cfg, 100, &err), err);

    /* A cut-off in the future. */
    CHECK_OK(paimon_cleanup_expire_config_set_older_than_ms(cfg, tu_now_ms() + 3600000LL, &err),
             err);
    CHECK_ERROR(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &report, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "future");
    /* The last of older-than / time-retained wins: this config is valid again. */
    CHECK_OK(paimon_cleanup_expire_config_set_time_retained_ms(cfg, 3600000, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_dry_run(cfg, true, &err), err);
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &report, &err), err);
    CHECK(report != NULL && paimon_cleanup_report_dry_run(report));
    paimon_cleanup_report_free(report);
    report = NULL;

    /* A table that does not exist. */
    missing_path = tu_format("%s/no-such-table", tmp);
    missing = make_context(missing_path);
    CHECK_ERROR(paimon_cleanup_expire_snapshots(missing, exec, cfg, NULL, &report, &err),
                PAIMON_CLEANUP_STATUS_NOT_FOUND, err, "no-such-table");
    CHECK(report == NULL);

    after = tu_list_tree(table, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "a failed call changed the table");

    /* Report accessors on NULL are neutral. */
    CHECK_EQ_I64(paimon_cleanup_report_kind(NULL), PAIMON_CLEANUP_REPORT_KIND_NONE);
    CHECK_EQ_I64(paimon_cleanup_report_expired_count(NULL), 0);
    CHECK_EQ_I64(paimon_cleanup_report_files(NULL, PAIMON_CLEANUP_FILE_CLASS_DATA), 0);
    CHECK_EQ_I64(paimon_cleanup_report_path_count(NULL), 0);
    CHECK(paimon_cleanup_report_path(NULL, 0) == NULL);
    CHECK(paimon_cleanup_report_failed_error(NULL, 0) == NULL);
    CHECK(!paimon_cleanup_report_dry_run(NULL));
    CHECK(strcmp(paimon_cleanup_file_class_name(PAIMON_CLEANUP_FILE_CLASS_MANIFEST_LIST),
                 "manifest_list") == 0);
    CHECK(strcmp(paimon_cleanup_file_class_name(PAIMON_CLEANUP_FILE_CLASS_COUNT), "unknown") == 0);
    CHECK(strcmp(paimon_cleanup_file_class_name(-1), "unknown") == 0);
    CHECK(strcmp(paimon_cleanup_report_kind_name(PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS),
                 "expire_snapshots") == 0);
    paimon_cleanup_report_free(NULL);
    paimon_cleanup_expire_config_free(NULL);
    paimon_cleanup_run_options_free(NULL);
    paimon_cleanup_cancel_token_free(NULL);
    paimon_cleanup_cancel_token_cancel(NULL);
    CHECK(!paimon_cleanup_cancel_token_is_cancelled(NULL));
    printf("  NULL arguments, out-of-range settings, retain min 0, retain max < min, future "
           "cut-off, missing table: reported, table unchanged\n");

    free(before);
    free(after);
    free(missing_path);
    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_context_free(missing);
    paimon_cleanup_context_free(bad_option);
    tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

int main(void) {
    const char *fixtures = tu_fixtures_dir();
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    size_t i;
    if (fixtures == NULL) return tu_missing_fixtures("test_expire");
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    if (exec == NULL) return tu_finish("test_expire");
    for (i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) check_table(fixtures, TABLES[i], exec);
    check_concurrent_dry_runs(fixtures, exec);
    check_max_memory(fixtures, TABLES[0], exec);
    check_errors(fixtures, exec);
    paimon_cleanup_executor_free(exec);
    return tu_finish("test_expire");
}
