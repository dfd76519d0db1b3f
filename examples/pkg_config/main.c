/* A C program built with pkg-config:
 *   cc main.c $(pkg-config --cflags --libs paimon_cleanup) -Wl,-rpath,<libdir> -o summary
 *   ./summary [table-uri]
 * Prints the library version and, given a table, its summary and what a snapshot expiry keeping
 * only the latest snapshot would delete (a dry run: the table is not changed). */
#include <stdint.h>
#include <stdio.h>

#include "paimon_cleanup.h"

/* Called on this thread or an executor thread; calls of one run never overlap. */
static void on_progress(void *user_data, const char *phase, uint64_t done, uint64_t total,
                        uint64_t bytes) {
    unsigned *calls = (unsigned *)user_data;
    (*calls)++;
    printf("  progress: %s %llu/%llu (%llu bytes so far)\n", phase, (unsigned long long)done,
           (unsigned long long)total, (unsigned long long)bytes);
}

static PaimonCleanupStatus dry_run_expire(PaimonCleanupContext *ctx, PaimonCleanupExecutor *exec,
                                          PaimonCleanupError **err) {
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupRunOptions *run = NULL;
    PaimonCleanupReport *report = NULL;
    unsigned calls = 0;
    int c;
    size_t i;
    PaimonCleanupStatus status = paimon_cleanup_expire_config_new(&cfg, err);
    if (status == PAIMON_CLEANUP_STATUS_OK)
        status = paimon_cleanup_expire_config_set_retain_min(cfg, 1, err);
    if (status == PAIMON_CLEANUP_STATUS_OK)
        status = paimon_cleanup_expire_config_set_time_retained_ms(cfg, 0, err);
    if (status == PAIMON_CLEANUP_STATUS_OK)
        status = paimon_cleanup_expire_config_set_dry_run(cfg, true, err);
    if (status == PAIMON_CLEANUP_STATUS_OK) status = paimon_cleanup_run_options_new(&run, err);
    if (status == PAIMON_CLEANUP_STATUS_OK)
        status = paimon_cleanup_run_options_set_progress(run, on_progress, &calls, err);
    if (status == PAIMON_CLEANUP_STATUS_OK)
        status = paimon_cleanup_expire_snapshots(ctx, exec, cfg, run, &report, err);
    if (status == PAIMON_CLEANUP_STATUS_OK) {
        printf("dry run: would expire %llu snapshots, delete %llu files (%llu bytes)\n",
               (unsigned long long)paimon_cleanup_report_expired_count(report),
               (unsigned long long)paimon_cleanup_report_total_files(report),
               (unsigned long long)paimon_cleanup_report_total_bytes(report));
        for (c = 0; c < PAIMON_CLEANUP_FILE_CLASS_COUNT; c++)
            if (paimon_cleanup_report_files(report, c) > 0)
                printf("  %-14s %llu\n", paimon_cleanup_file_class_name(c),
                       (unsigned long long)paimon_cleanup_report_files(report, c));
        for (i = 0; i < paimon_cleanup_report_path_count(report) && i < 5; i++)
            printf("  would delete %s\n", paimon_cleanup_report_path(report, i));
    }
    paimon_cleanup_report_free(report);
    paimon_cleanup_run_options_free(run);
    paimon_cleanup_expire_config_free(cfg);
    return status;
}

int main(int argc, char **argv) {
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary s;
    PaimonCleanupStatus status;
    int rc = 0;

    printf("paimon-cleanup %s (ABI %u)\n", paimon_cleanup_version(), paimon_cleanup_abi_version());
    if (paimon_cleanup_abi_version() != PAIMON_CLEANUP_ABI_VERSION) return 1;
    if (argc < 2) return 0;

    status = paimon_cleanup_executor_new(0, &exec, &err);
    if (status == PAIMON_CLEANUP_STATUS_OK)
        status = paimon_cleanup_context_new(argv[1], NULL, NULL, 0, &ctx, &err);
    if (status == PAIMON_CLEANUP_STATUS_OK)
        status = paimon_cleanup_table_summary(ctx, exec, &s, &err);
    if (status == PAIMON_CLEANUP_STATUS_OK) {
        printf("snapshots %llu (latest %lld), tags %llu, branches %llu, live files %llu "
               "(%llu bytes)\n",
               (unsigned long long)s.snapshot_count, (long long)s.latest_snapshot_id,
               (unsigned long long)s.tag_count, (unsigned long long)s.branch_count,
               (unsigned long long)s.live_file_count, (unsigned long long)s.live_file_bytes);
        status = dry_run_expire(ctx, exec, &err);
    }
    if (status != PAIMON_CLEANUP_STATUS_OK) {
        fprintf(stderr, "error %d (%s): %s\n", (int)status, paimon_cleanup_status_name(status),
                paimon_cleanup_error_message(err));
        rc = 1;
    }
    paimon_cleanup_error_free(err);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
    return rc;
}
