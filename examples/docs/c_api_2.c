/* docs/c-api.md, "Maintenance operations": the shape of an operation. Redeclaring it at file
 * scope makes the compiler check it against the header's declaration. */
#include <paimon_cleanup.h>

/* doc-block docs/c-api.md 2 */
PaimonCleanupStatus paimon_cleanup_expire_snapshots(const PaimonCleanupContext *context,
                                                    const PaimonCleanupExecutor *executor,
                                                    const PaimonCleanupExpireConfig *config,
                                                    const PaimonCleanupRunOptions *run_options, /* nullable */
                                                    PaimonCleanupReport **out,
                                                    PaimonCleanupError **err);
/* doc-block end */

int main(void) { return 0; }
