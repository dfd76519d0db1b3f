/* docs/c-api.md, "Memory bound": a snapshot expiry under a 1 GiB bound. Runs on a copy of a
 * Java-written fixture table when the fixtures are there (the run fits in the bound and
 * expires), else on a table path that does not exist (NOT_FOUND, not the bound's branch). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <paimon_cleanup.h>

#include "test_util.h"

int main(void) {
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupRunOptions *run = NULL;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    char *tmp_root = NULL;
    char *table = NULL;
    int bounded = 0;
    const char *fixtures = tu_fixtures_dir();
    if (fixtures != NULL) table = tu_copy_fixture_table(fixtures, "orc/append_09.db/append_09", &tmp_root);
    if (paimon_cleanup_executor_new(2, &exec, &err) != PAIMON_CLEANUP_STATUS_OK ||
        paimon_cleanup_context_new(table != NULL ? table : "/nonexistent/paimon-cleanup/db.db/t", NULL, NULL, 0,
                                   &ctx, &err) != PAIMON_CLEANUP_STATUS_OK ||
        paimon_cleanup_expire_config_new(&cfg, &err) != PAIMON_CLEANUP_STATUS_OK ||
        paimon_cleanup_expire_config_set_retain_min(cfg, 1, &err) != PAIMON_CLEANUP_STATUS_OK ||
        paimon_cleanup_run_options_new(&run, &err) != PAIMON_CLEANUP_STATUS_OK) {
        fprintf(stderr, "%s\n", paimon_cleanup_error_message(err));
        return 1;
    }
    {
/* doc-block docs/c-api.md 5 */
paimon_cleanup_run_options_set_max_memory(run, (uint64_t)1 << 30, &err);   /* 1 GiB */
if (paimon_cleanup_expire_snapshots(ctx, exec, cfg, run, &report, &err) == PAIMON_CLEANUP_STATUS_MEMORY_LIMIT) {
    /* the plan needs more than 1 GiB: nothing was deleted or committed; raise the bound or
       remove less per run (a lower max_expires, fewer partitions) */
}
/* doc-block end */
    }
    /* A 1 GiB bound is far above what this table needs: reaching the bound is a bug. */
    bounded = paimon_cleanup_error_status(err) == PAIMON_CLEANUP_STATUS_MEMORY_LIMIT;
    if (report != NULL) {
        printf("expired %llu snapshots within the bound\n",
               (unsigned long long)paimon_cleanup_report_expired_count(report));
    } else {
        printf("%s: %s\n", paimon_cleanup_status_name(paimon_cleanup_error_status(err)),
               paimon_cleanup_error_message(err));
    }
    paimon_cleanup_report_free(report);
    paimon_cleanup_error_free(err);
    paimon_cleanup_run_options_free(run);
    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
    if (tmp_root != NULL) tu_remove_tree(tmp_root);
    free(table);
    free(tmp_root);
    return bounded ? 1 : 0;
}
