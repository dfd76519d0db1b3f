/* docs/c-api.md, "Logs": the log callback type and attaching it to run options; runs. */
#include <stdio.h>

#include <paimon_cleanup.h>

struct logger {
    unsigned events;
};

static void on_log(void *user_data, int32_t level, const char *target, const char *message) {
    struct logger *logger = (struct logger *)user_data;
    logger->events++;
    printf("[%d] %s: %s\n", (int)level, target, message);
}

int main(void) {
    struct logger my_logger = {0};
    PaimonCleanupRunOptions *run = NULL;
    PaimonCleanupError *err = NULL;
    if (paimon_cleanup_run_options_new(&run, &err) != PAIMON_CLEANUP_STATUS_OK) return 1;
    {
/* doc-block docs/c-api.md 4 */
typedef void (*PaimonCleanupLogFn)(void *user_data, int32_t level, const char *target,
                                   const char *message);
paimon_cleanup_run_options_set_log(run, on_log, PAIMON_CLEANUP_LOG_LEVEL_INFO, &my_logger, &err);
/* doc-block end */
    }
    if (err != NULL) {
        fprintf(stderr, "%s\n", paimon_cleanup_error_message(err));
        paimon_cleanup_error_free(err);
        paimon_cleanup_run_options_free(run);
        return 1;
    }
    paimon_cleanup_run_options_free(run);
    printf("log callback attached\n");
    return 0;
}
