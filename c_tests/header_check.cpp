// Compile-only: the public header is valid C++11 and declares its functions extern "C".
#include "paimon_cleanup.h"

int paimon_cleanup_header_check_cpp11();
int paimon_cleanup_header_check_cpp11() {
    PaimonCleanupTableSummary summary = {};
    PaimonCleanupStatus status = PAIMON_CLEANUP_STATUS_OK;
    const char *(*version)(void) = &paimon_cleanup_version;
    return static_cast<int>(status) + static_cast<int>(summary.has_snapshots) +
           (version != nullptr ? 1 : 0);
}
