/* The cross-binding scenario through the plain C API: the reference the C++, Go and Java
 * bindings are compared with.
 *
 *   paimon_cleanup_scenario_c <table-copy>
 *
 * Runs the steps of bindings/SCENARIO.md on a table copy the caller prepared and prints one
 * canonical line per step ("SCENARIO <step> <json>"). Exit status: 0 when every step ran. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paimon_cleanup.h"

static int failed = 0;

/* Prints the error of a failed call (if any), frees it and returns 1 when the call failed. */
static int fail_if(PaimonCleanupStatus status, PaimonCleanupError **err, const char *what) {
    if (status == PAIMON_CLEANUP_STATUS_OK) return 0;
    fprintf(stderr, "%s: %s: %s\n", what, paimon_cleanup_status_name(status),
            paimon_cleanup_error_message(*err));
    paimon_cleanup_error_free(*err);
    *err = NULL;
    failed = 1;
    return 1;
}

/* The next expiry's cut-off is "now": wait until the clock has moved past the drop commit's
 * millisecond, so that its snapshot is older than the cut-off in every run (a snapshot of the
 * cut-off's own millisecond is not older, and the step would expire nothing). */
static void past_the_commit(void) {
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void print_summary(const char *step, const PaimonCleanupTableSummary *s) {
    printf("SCENARIO %s {\"has_snapshots\":%s,\"earliest\":%" PRId64 ",\"latest\":%" PRId64
           ",\"snapshots\":%" PRIu64 ",\"tags\":%" PRIu64 ",\"branches\":%" PRIu64
           ",\"live_files\":%" PRIu64 ",\"live_bytes\":%" PRIu64 "}\n",
           step, s->has_snapshots ? "true" : "false", s->earliest_snapshot_id,
           s->latest_snapshot_id, s->snapshot_count, s->tag_count, s->branch_count,
           s->live_file_count, s->live_file_bytes);
}

/* Prints a JSON string: '"' and '\\' escaped, control characters as \u00XX. */
static void print_quoted(const char *s) {
    const unsigned char *p;
    putchar('"');
    for (p = (const unsigned char *)(s != NULL ? s : ""); *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void print_list(size_t n, const char *(*at)(const PaimonCleanupReport *, size_t),
                       const PaimonCleanupReport *r) {
    size_t i;
    putchar('[');
    for (i = 0; i < n; i++) {
        if (i > 0) putchar(',');
        print_quoted(at(r, i));
    }
    putchar(']');
}

static void print_report(const char *step, const PaimonCleanupReport *r) {
    size_t n = paimon_cleanup_report_path_count(r), i;
    const char **paths = malloc((n > 0 ? n : 1) * sizeof *paths);
    uint64_t h = 0xcbf29ce484222325ULL;
    int c, first;
    if (paths == NULL) abort();
    for (i = 0; i < n; i++) paths[i] = paimon_cleanup_report_path(r, i);
    qsort(paths, n, sizeof *paths, compare_strings);
    for (i = 0; i < n; i++) {
        const unsigned char *p;
        for (p = (const unsigned char *)paths[i]; *p != '\0'; p++) {
            h ^= *p;
            h *= 0x100000001b3ULL;
        }
        h ^= (unsigned char)'\n';
        h *= 0x100000001b3ULL;
    }
    free(paths);

    printf("SCENARIO %s {\"kind\":\"%s\",\"dry_run\":%s,\"expired\":%" PRIu64
           ",\"expired_range\":",
           step, paimon_cleanup_report_kind_name(paimon_cleanup_report_kind(r)),
           paimon_cleanup_report_dry_run(r) ? "true" : "false",
           paimon_cleanup_report_expired_count(r));
    if (paimon_cleanup_report_has_expired_range(r))
        printf("[%" PRId64 ",%" PRId64 "]", paimon_cleanup_report_first_expired_id(r),
               paimon_cleanup_report_last_expired_id(r));
    else
        printf("null");
    printf(",\"earliest_after\":");
    if (paimon_cleanup_report_has_earliest_after(r))
        printf("%" PRId64, paimon_cleanup_report_earliest_after_id(r));
    else
        printf("null");
    printf(",\"changelogs_written\":%" PRIu64 ",\"files\":{",
           paimon_cleanup_report_changelogs_written(r));
    for (c = 0, first = 1; c < PAIMON_CLEANUP_FILE_CLASS_COUNT; c++) {
        if (paimon_cleanup_report_files(r, c) == 0) continue;
        printf("%s\"%s\":%" PRIu64, first ? "" : ",", paimon_cleanup_file_class_name(c),
               paimon_cleanup_report_files(r, c));
        first = 0;
    }
    printf("},\"bytes\":{");
    for (c = 0, first = 1; c < PAIMON_CLEANUP_FILE_CLASS_COUNT; c++) {
        if (paimon_cleanup_report_files(r, c) == 0) continue;
        printf("%s\"%s\":%" PRIu64, first ? "" : ",", paimon_cleanup_file_class_name(c),
               paimon_cleanup_report_bytes(r, c));
        first = 0;
    }
    printf("},\"total_files\":%" PRIu64 ",\"total_bytes\":%" PRIu64 ",\"dirs_removed\":%" PRIu64
           ",\"failed\":%zu,\"paths\":%zu,\"paths_fnv1a\":\"%016" PRIx64 "\",\"names\":",
           paimon_cleanup_report_total_files(r), paimon_cleanup_report_total_bytes(r),
           paimon_cleanup_report_dirs_removed(r), paimon_cleanup_report_failed_count(r), n, h);
    print_list(paimon_cleanup_report_name_count(r), paimon_cleanup_report_name, r);
    printf(",\"missing\":");
    print_list(paimon_cleanup_report_missing_count(r), paimon_cleanup_report_missing, r);
    printf(",\"marked\":{\"files\":%" PRIu64 ",\"rows\":%" PRIu64 ",\"bytes\":%" PRIu64
           "},\"committed\":[",
           paimon_cleanup_report_files_marked_deleted(r), paimon_cleanup_report_rows_marked_deleted(r),
           paimon_cleanup_report_bytes_marked_deleted(r));
    for (i = 0; i < paimon_cleanup_report_committed_snapshot_count(r); i++)
        printf("%s%" PRId64, i > 0 ? "," : "", paimon_cleanup_report_committed_snapshot_id(r, i));
    printf("],\"orphan\":{\"candidates\":%" PRIu64 ",\"referenced\":%" PRIu64
           ",\"vetoed\":%" PRIu64 "},\"warnings\":%zu,\"steps\":%zu}\n",
           paimon_cleanup_report_candidates(r), paimon_cleanup_report_referenced(r),
           paimon_cleanup_report_vetoed(r), paimon_cleanup_report_warning_count(r),
           paimon_cleanup_report_step_count(r));
}

static void expire(const char *step, PaimonCleanupContext *ctx, PaimonCleanupExecutor *exec,
                   int dry_run) {
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    if (fail_if(paimon_cleanup_expire_config_new(&cfg, &err), &err, "expire_config_new")) return;
    if (!fail_if(paimon_cleanup_expire_config_set_retain_min(cfg, 1, &err), &err, "retain_min") &&
        !fail_if(paimon_cleanup_expire_config_set_older_than_ms(cfg, now_ms(), &err), &err,
                 "older_than") &&
        !fail_if(paimon_cleanup_expire_config_set_max_expires(cfg, 1000, &err), &err,
                 "max_expires") &&
        !fail_if(paimon_cleanup_expire_config_set_dry_run(cfg, dry_run != 0, &err), &err,
                 "dry_run") &&
        !fail_if(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &report, &err), &err,
                 step)) {
        print_report(step, report);
    }
    paimon_cleanup_report_free(report);
    paimon_cleanup_expire_config_free(cfg);
}

static void orphan(const char *step, PaimonCleanupContext *ctx, PaimonCleanupExecutor *exec,
                   int dry_run) {
    PaimonCleanupOrphanConfig *cfg = NULL;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    if (fail_if(paimon_cleanup_orphan_config_new(&cfg, &err), &err, "orphan_config_new")) return;
    if (!fail_if(paimon_cleanup_orphan_config_set_dry_run(cfg, dry_run != 0, &err), &err,
                 "dry_run") &&
        !fail_if(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &report, &err), &err,
                 step))
        print_report(step, report);
    paimon_cleanup_report_free(report);
    paimon_cleanup_orphan_config_free(cfg);
}

static void drop_f1_20(const char *step, PaimonCleanupContext *ctx, PaimonCleanupExecutor *exec) {
    const char *keys[] = {"f1"}, *values[] = {"20"};
    PaimonCleanupPartitionSpec spec;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    spec.keys = keys;
    spec.values = values;
    spec.field_count = 1;
    if (!fail_if(paimon_cleanup_drop_partitions(ctx, exec, &spec, 1, NULL, &report, &err), &err,
                 step))
        print_report(step, report);
    paimon_cleanup_report_free(report);
}

int main(int argc, char **argv) {
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupContext *ctx = NULL, *missing = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary summary;
    PaimonCleanupStatus status;
    char *missing_uri;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <table-copy>\n", argv[0]);
        return 2;
    }
    if (fail_if(paimon_cleanup_executor_new(2, &exec, &err), &err, "executor_new") ||
        fail_if(paimon_cleanup_context_new(argv[1], NULL, NULL, 0, &ctx, &err), &err,
                "context_new")) {
        paimon_cleanup_executor_free(exec);
        return 1;
    }

    if (!fail_if(paimon_cleanup_table_summary(ctx, exec, &summary, &err), &err, "summary"))
        print_summary("summary-before", &summary);
    expire("expire-dry-run", ctx, exec, 1);
    expire("expire", ctx, exec, 0);
    orphan("orphan-dry-run", ctx, exec, 1);
    orphan("orphan", ctx, exec, 0);
    drop_f1_20("drop-partitions", ctx, exec);
    past_the_commit();
    expire("expire-after-drop", ctx, exec, 0);
    if (!fail_if(paimon_cleanup_table_summary(ctx, exec, &summary, &err), &err, "summary"))
        print_summary("summary-after", &summary);

    missing_uri = malloc(strlen(argv[1]) + sizeof "/does-not-exist");
    if (missing_uri == NULL) abort();
    strcpy(missing_uri, argv[1]);
    strcat(missing_uri, "/does-not-exist");
    if (!fail_if(paimon_cleanup_context_new(missing_uri, NULL, NULL, 0, &missing, &err), &err,
                 "context_new")) {
        status = paimon_cleanup_table_summary(missing, exec, &summary, &err);
        if (status == PAIMON_CLEANUP_STATUS_OK)
            printf("SCENARIO missing-table {\"status\":0}\n");
        else
            printf("SCENARIO missing-table {\"status\":%d,\"name\":\"%s\"}\n", (int)status,
                   paimon_cleanup_status_name(status));
        paimon_cleanup_error_free(err);
        err = NULL;
    }
    free(missing_uri);
    paimon_cleanup_context_free(missing);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
    return failed;
}
