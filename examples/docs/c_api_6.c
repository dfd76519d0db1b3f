/* docs/c-api.md, "Reports" example: a snapshot expiry with progress, cancellation and a report.
 * Runs on a copy of a Java-written fixture table when the fixtures are there (the block expires
 * what is older than a day beyond the 10 newest snapshots), else on a table path that does not
 * exist (the error branch of the block). */
#include <stdio.h>
#include <stdlib.h>

#include <paimon_cleanup.h>

#include "test_util.h"

struct progress_state {
    unsigned calls;
};

static void on_progress(void *user_data, const char *phase, uint64_t done, uint64_t total,
                        uint64_t bytes) {
    struct progress_state *state = (struct progress_state *)user_data;
    state->calls++;
    (void)phase;
    (void)done;
    (void)total;
    (void)bytes;
}

int main(void) {
    struct progress_state my_state = {0};
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *open_err = NULL;
    char *tmp_root = NULL;
    char *table = NULL;
    const char *fixtures = tu_fixtures_dir();
    if (fixtures != NULL) table = tu_copy_fixture_table(fixtures, "orc/append_09.db/append_09", &tmp_root);
    if (paimon_cleanup_executor_new(2, &exec, &open_err) != PAIMON_CLEANUP_STATUS_OK ||
        paimon_cleanup_context_new(table != NULL ? table : "/nonexistent/paimon-cleanup/db.db/t", NULL, NULL, 0,
                                   &ctx, &open_err) != PAIMON_CLEANUP_STATUS_OK) {
        fprintf(stderr, "%s\n", paimon_cleanup_error_message(open_err));
        return 1;
    }
    {
/* doc-block docs/c-api.md 6 */
PaimonCleanupExpireConfig *cfg = NULL;
PaimonCleanupRunOptions *run = NULL;
PaimonCleanupCancelToken *cancel = NULL;   /* another thread may call _cancel(cancel) */
PaimonCleanupReport *report = NULL;
PaimonCleanupError *err = NULL;

paimon_cleanup_expire_config_new(&cfg, NULL);
paimon_cleanup_expire_config_set_retain_min(cfg, 10, NULL);
paimon_cleanup_expire_config_set_time_retained_ms(cfg, 24ULL * 3600 * 1000, NULL);
paimon_cleanup_run_options_new(&run, NULL);
paimon_cleanup_cancel_token_new(&cancel, NULL);
paimon_cleanup_run_options_set_cancel_token(run, cancel, NULL);
paimon_cleanup_run_options_set_progress(run, on_progress, &my_state, NULL);

if (paimon_cleanup_expire_snapshots(ctx, exec, cfg, run, &report, &err) == PAIMON_CLEANUP_STATUS_OK) {
    printf("%llu snapshots expired, %llu data files deleted\n",
           (unsigned long long)paimon_cleanup_report_expired_count(report),
           (unsigned long long)paimon_cleanup_report_files(report, PAIMON_CLEANUP_FILE_CLASS_DATA));
    for (size_t i = 0; i < paimon_cleanup_report_failed_count(report); i++)
        fprintf(stderr, "not deleted: %s: %s\n", paimon_cleanup_report_failed_path(report, i),
                paimon_cleanup_report_failed_error(report, i));
} else {
    fprintf(stderr, "%s\n", paimon_cleanup_error_message(err));
}
paimon_cleanup_report_free(report);
paimon_cleanup_error_free(err);
paimon_cleanup_cancel_token_free(cancel);
paimon_cleanup_run_options_free(run);
paimon_cleanup_expire_config_free(cfg);
/* doc-block end */
    }
    printf("progress callbacks: %u\n", my_state.calls);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
    if (tmp_root != NULL) tu_remove_tree(tmp_root);
    free(table);
    free(tmp_root);
    return 0;
}
