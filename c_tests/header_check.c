/* Compile-only: the public header is valid strict C99 (no warnings with -Wpedantic -Werror). */
#include "paimon_cleanup.h"

int paimon_cleanup_header_check_c99(void);
int paimon_cleanup_header_check_c99(void) {
    PaimonCleanupTableSummary summary = {0};
    PaimonCleanupStatus status = PAIMON_CLEANUP_STATUS_OK;
    return (int)status + (int)summary.has_snapshots + PAIMON_CLEANUP_ABI_VERSION +
           PAIMON_CLEANUP_VERSION_MAJOR;
}
