/* README.md, "The C API at a glance": the block runs as written. The table does not exist, so
 * the summary fails and the example prints the error (the error path of the block). */
#include <stdio.h>

#include <paimon_cleanup.h>

int main(void) {
/* doc-block README.md 1 */
#include <paimon_cleanup.h>

PaimonCleanupExecutor *exec = NULL;
PaimonCleanupContext *ctx = NULL;
PaimonCleanupError *err = NULL;
const char *keys[] = {"s3.region"}, *vals[] = {"us-east-1"};

paimon_cleanup_executor_new(4 /* worker threads */, &exec, &err);
paimon_cleanup_context_new("file:///data/wh/db.db/t", keys, vals, 1, &ctx, &err);

PaimonCleanupTableSummary summary;
if (paimon_cleanup_table_summary(ctx, exec, &summary, &err) != PAIMON_CLEANUP_STATUS_OK) {
    fprintf(stderr, "%s\n", paimon_cleanup_error_message(err));
    paimon_cleanup_error_free(err);
}
paimon_cleanup_context_free(ctx);
paimon_cleanup_executor_free(exec);
/* doc-block end */
    return 0;
}
