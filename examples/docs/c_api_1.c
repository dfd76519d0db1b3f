/* docs/c-api.md, "A minimal caller": built, not run (it reads an S3 bucket). */
#include <stdio.h>

#include <paimon_cleanup.h>

int main(void) {
/* doc-block docs/c-api.md 1 */
PaimonCleanupExecutor *exec = NULL;
PaimonCleanupContext *ctx = NULL;
PaimonCleanupError *err = NULL;
PaimonCleanupTableSummary s;
const char *keys[] = {"s3.region"}, *values[] = {"eu-west-1"};

if (paimon_cleanup_executor_new(4, &exec, &err) == PAIMON_CLEANUP_STATUS_OK &&
    paimon_cleanup_context_new("s3://bucket/wh/db.db/t", keys, values, 1, &ctx, &err) == PAIMON_CLEANUP_STATUS_OK &&
    paimon_cleanup_table_summary(ctx, exec, &s, &err) == PAIMON_CLEANUP_STATUS_OK) {
    printf("%llu live files\n", (unsigned long long)s.live_file_count);
} else {
    fprintf(stderr, "%s: %s\n", paimon_cleanup_status_name(paimon_cleanup_error_status(err)),
            paimon_cleanup_error_message(err));
}
paimon_cleanup_error_free(err);
paimon_cleanup_context_free(ctx);
paimon_cleanup_executor_free(exec);
/* doc-block end */
    return 0;
}
