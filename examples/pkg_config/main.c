/* A C program built with pkg-config:
 *   cc main.c $(pkg-config --cflags --libs paimon_cleanup) -Wl,-rpath,<libdir> -o summary
 *   ./summary [table-uri]
 * Prints the library version and, given a table, its summary. */
#include <stdio.h>

#include "paimon_cleanup.h"

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
    } else {
        fprintf(stderr, "error %d (%s): %s\n", (int)status, paimon_cleanup_status_name(status),
                paimon_cleanup_error_message(err));
        rc = 1;
    }
    paimon_cleanup_error_free(err);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
    return rc;
}
