/* Executors with 1, 2 and 8 worker threads, each used by several host threads (pthreads) calling
 * the table summary at once; every concurrent result must equal a single-threaded reference.
 * Also creates and frees handles concurrently. Uses a copied fixture table when available, and a
 * missing table otherwise (then the error path runs concurrently). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paimon_cleanup.h"
#include "test_util.h"

#define HOST_THREADS 6
#define CALLS_PER_THREAD 4

typedef struct {
    const PaimonCleanupContext *ctx;
    const PaimonCleanupExecutor *exec;
    int reference_status;
    PaimonCleanupTableSummary reference;
    const char *reference_message;
} shared_state;

static int same_summary(const PaimonCleanupTableSummary *a, const PaimonCleanupTableSummary *b) {
    return a->has_snapshots == b->has_snapshots &&
           a->earliest_snapshot_id == b->earliest_snapshot_id &&
           a->latest_snapshot_id == b->latest_snapshot_id &&
           a->snapshot_count == b->snapshot_count && a->tag_count == b->tag_count &&
           a->branch_count == b->branch_count && a->live_file_count == b->live_file_count &&
           a->live_file_bytes == b->live_file_bytes;
}

static void *call_summary(void *arg) {
    const shared_state *st = (const shared_state *)arg;
    int i;
    for (i = 0; i < CALLS_PER_THREAD; i++) {
        PaimonCleanupTableSummary s;
        PaimonCleanupError *err = NULL;
        int status = paimon_cleanup_table_summary(st->ctx, st->exec, &s, &err);
        CHECK_MSG(status == st->reference_status, "concurrent status %d != reference %d (%s)",
                  status, st->reference_status, paimon_cleanup_error_message(err));
        if (status == PAIMON_CLEANUP_STATUS_OK) {
            CHECK(err == NULL);
            CHECK(same_summary(&s, &st->reference));
        } else {
            CHECK(err != NULL);
            CHECK_MSG(strcmp(paimon_cleanup_error_message(err), st->reference_message) == 0,
                      "concurrent message \"%s\" != reference \"%s\"",
                      paimon_cleanup_error_message(err), st->reference_message);
        }
        paimon_cleanup_error_free(err);
    }
    return NULL;
}

/* Each thread builds and frees its own executor and context while others do the same. */
static void *churn_handles(void *arg) {
    const char *table = (const char *)arg;
    int i;
    for (i = 0; i < 3; i++) {
        PaimonCleanupExecutor *exec = NULL;
        PaimonCleanupContext *ctx = NULL;
        PaimonCleanupError *err = NULL;
        PaimonCleanupTableSummary s;
        CHECK_OK(paimon_cleanup_executor_new((uint32_t)(1 + i), &exec, &err), err);
        CHECK_OK(paimon_cleanup_context_new(table, NULL, NULL, 0, &ctx, &err), err);
        (void)paimon_cleanup_table_summary(ctx, exec, &s, &err);
        paimon_cleanup_error_free(err);
        paimon_cleanup_context_free(ctx);
        paimon_cleanup_executor_free(exec);
    }
    return NULL;
}

static void run_with_workers(uint32_t workers, const PaimonCleanupContext *ctx,
                             const shared_state *reference) {
    pthread_t threads[HOST_THREADS];
    shared_state st = *reference;
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    int i;
    printf("executor with %u worker thread(s), %d host threads x %d calls\n", workers,
           HOST_THREADS, CALLS_PER_THREAD);
    CHECK_OK(paimon_cleanup_executor_new(workers, &exec, &err), err);
    if (exec == NULL) return;
    CHECK_EQ_I64(paimon_cleanup_executor_worker_threads(exec), workers);
    st.ctx = ctx;
    st.exec = exec;
    for (i = 0; i < HOST_THREADS; i++)
        CHECK(pthread_create(&threads[i], NULL, call_summary, &st) == 0);
    /* Changing the I/O concurrency while calls run is allowed. */
    CHECK_OK(paimon_cleanup_executor_set_io_concurrency(exec, 16, &err), err);
    for (i = 0; i < HOST_THREADS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
    paimon_cleanup_executor_free(exec);
}

int main(void) {
    static const uint32_t WORKERS[] = {1, 2, 8};
    const char *fixtures = tu_fixtures_dir();
    char *tmp = NULL, *table = NULL;
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    shared_state reference;
    pthread_t churn[4];
    size_t i;

    if (fixtures != NULL) {
        table = tu_copy_fixture_table(fixtures, "orc/append_09.db/append_09", &tmp);
    } else {
        printf("note: no fixtures; running concurrently on a missing table (error path)\n");
        tmp = tu_make_temp_dir();
        table = tu_format("%s/missing", tmp);
    }
    if (table == NULL) return tu_finish("test_threads");

    memset(&reference, 0, sizeof reference);
    CHECK_OK(paimon_cleanup_context_new(table, NULL, NULL, 0, &ctx, &err), err);
    CHECK_OK(paimon_cleanup_executor_new(1, &exec, &err), err);
    if (ctx == NULL || exec == NULL) return tu_finish("test_threads");
    reference.reference_status =
        paimon_cleanup_table_summary(ctx, exec, &reference.reference, &err);
    reference.reference_message = paimon_cleanup_error_message(err);
    printf("reference: status %d (%s) %s\n", reference.reference_status,
           paimon_cleanup_status_name(reference.reference_status), reference.reference_message);
    if (fixtures != NULL)
        CHECK_MSG(reference.reference_status == PAIMON_CLEANUP_STATUS_OK,
                  "summary of the fixture table failed: %s", reference.reference_message);
    paimon_cleanup_executor_free(exec);

    for (i = 0; i < sizeof WORKERS / sizeof WORKERS[0]; i++)
        run_with_workers(WORKERS[i], ctx, &reference);

    printf("concurrent handle creation and release\n");
    for (i = 0; i < 4; i++) CHECK(pthread_create(&churn[i], NULL, churn_handles, table) == 0);
    for (i = 0; i < 4; i++) CHECK(pthread_join(churn[i], NULL) == 0);

    paimon_cleanup_error_free(err);
    paimon_cleanup_context_free(ctx);
    tu_remove_tree(tmp);
    free(table);
    free(tmp);
    return tu_finish("test_threads");
}
