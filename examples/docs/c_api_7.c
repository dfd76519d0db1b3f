/* docs/c-api.md, "Orphan removal as units": built, not run (it reads an S3 bucket). The block
 * plans, executes every unit in this process, merges and decides. */
#include <stddef.h>

#include <paimon_cleanup.h>

int main(void) {
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupOrphanConfig *cfg = NULL;
    PaimonCleanupError *err = NULL;
    const char *keys[] = {"s3.access-key", "s3.secret-key"}, *values[] = {"id", "secret"};
    size_t n = 2;
    paimon_cleanup_executor_new(2, &exec, &err);
    paimon_cleanup_context_new("s3://bucket/wh/db.db/t", NULL, NULL, 0, &ctx, &err);
    paimon_cleanup_orphan_config_new(&cfg, &err);
/* doc-block docs/c-api.md 7 */
PaimonCleanupBuffer *state = NULL, *merged = NULL, *decision = NULL;
PaimonCleanupBufferList *units = NULL, *deletes = NULL;
paimon_cleanup_orphan_units_plan(ctx, exec, cfg, NULL, &state, &units, &err);
for (size_t i = 0; i < paimon_cleanup_buffer_list_count(units); i++) {   /* on the workers */
    const PaimonCleanupBuffer *u = paimon_cleanup_buffer_list_get(units, i);
    PaimonCleanupBuffer *part = NULL, *next = NULL;
    paimon_cleanup_orphan_unit_execute(exec, paimon_cleanup_buffer_data(u),
                                       paimon_cleanup_buffer_len(u), keys, values, n, NULL,
                                       &part, &err);
    paimon_cleanup_orphan_partials_merge(paimon_cleanup_buffer_data(merged),
                                         paimon_cleanup_buffer_len(merged),
                                         paimon_cleanup_buffer_data(part),
                                         paimon_cleanup_buffer_len(part), &next, &err);
    paimon_cleanup_buffer_free(part);
    paimon_cleanup_buffer_free(merged);
    merged = next;
}
paimon_cleanup_orphan_units_decide(ctx, exec, cfg, NULL, paimon_cleanup_buffer_data(state),
                                   paimon_cleanup_buffer_len(state),
                                   paimon_cleanup_buffer_data(merged),
                                   paimon_cleanup_buffer_len(merged), &decision, &deletes, &err);
/* ... execute and merge the delete units the same way, then paimon_cleanup_orphan_units_finish */
/* doc-block end */
    paimon_cleanup_buffer_free(state);
    paimon_cleanup_buffer_free(merged);
    paimon_cleanup_buffer_free(decision);
    paimon_cleanup_buffer_list_free(units);
    paimon_cleanup_buffer_list_free(deletes);
    paimon_cleanup_error_free(err);
    paimon_cleanup_orphan_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    paimon_cleanup_executor_free(exec);
    return 0;
}
