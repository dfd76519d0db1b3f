/* Small helpers shared by the C tests: checks, fixture location, temp dirs, commands. */
#ifndef PAIMON_CLEANUP_TEST_UTIL_H
#define PAIMON_CLEANUP_TEST_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include "paimon_cleanup.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit code ctest treats as "skipped" (SKIP_RETURN_CODE). */
#define TU_SKIP 77

/* Number of failed checks so far (all threads). */
extern int tu_failures;

void tu_fail(const char *file, int line, const char *fmt, ...);

#define CHECK(cond)                                                  \
    do {                                                             \
        if (!(cond)) tu_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
    } while (0)

#define CHECK_MSG(cond, ...)                                      \
    do {                                                          \
        if (!(cond)) tu_fail(__FILE__, __LINE__, __VA_ARGS__);    \
    } while (0)

#define CHECK_EQ_I64(a, b)                                                                  \
    do {                                                                                    \
        long long tu_a_ = (long long)(a), tu_b_ = (long long)(b);                           \
        if (tu_a_ != tu_b_)                                                                 \
            tu_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, tu_a_, tu_b_);    \
    } while (0)

/* Checks that a call failed with `expected`, that `err` carries the same status, and that the
 * message contains `needle` (when not NULL). Frees `err` and sets it to NULL. */
#define CHECK_ERROR(status, expected, err, needle) \
    tu_check_error(__FILE__, __LINE__, (int)(status), (int)(expected), &(err), (needle))
void tu_check_error(const char *file, int line, int status, int expected, PaimonCleanupError **err,
                    const char *needle);

/* Checks that a call succeeded; on failure prints the error message. Frees `err`. */
#define CHECK_OK(status, err) tu_check_ok(__FILE__, __LINE__, (int)(status), &(err))
void tu_check_ok(const char *file, int line, int status, PaimonCleanupError **err);

/* The Java-written fixture tables directory, or NULL when absent. Looks at $PAIMON_FIXTURES,
 * then at ../shared/fixtures/java-written-tables next to the repository. */
const char *tu_fixtures_dir(void);

/* What to do when fixtures are missing: prints SKIP and returns TU_SKIP, or prints FAIL and
 * returns 1 when PAIMON_REQUIRE_FIXTURES=1. */
int tu_missing_fixtures(const char *test_name);

/* A fresh temporary directory (malloc'ed path). Exits on failure. */
char *tu_make_temp_dir(void);

/* Copies fixture table `relative` (e.g. "orc/append_09.db/append_09") into a new temp dir and
 * returns the copy's path (malloc'ed), or NULL on failure. *tmp_root receives the temp dir. */
char *tu_copy_fixture_table(const char *fixtures, const char *relative, char **tmp_root);

/* rm -rf. */
void tu_remove_tree(const char *dir);

/* Runs a shell command and returns its stdout (malloc'ed) or NULL; *exit_code gets the status. */
char *tu_run_capture(const char *command, int *exit_code);

/* Writes `text` to `path` (truncating). Returns 0 on success. */
int tu_write_file(const char *path, const char *text);

/* Number of directory entries of `dir` whose name starts with `prefix` (-1 if dir missing). */
int tu_count_entries(const char *dir, const char *prefix);

/* Largest N among entries named `<prefix>N` in `dir`, or -1. */
long long tu_max_numbered_entry(const char *dir, const char *prefix);

/* A sorted listing of everything under `dir` (malloc'ed), one line per entry: "d <relative path>"
 * for directories, "f <relative path> <size>" for files, plus " <mtime>" when `with_times` is
 * non-zero. NULL if `dir` cannot be listed. */
char *tu_list_tree(const char *dir, int with_times);

/* 1 if `path` exists (file or directory). */
int tu_exists(const char *path);

/* Milliseconds since the Unix epoch. */
long long tu_now_ms(void);

/* Prints the first line where two listings differ (for failure messages). */
void tu_print_first_difference(const char *a, const char *b);

/* malloc'ed printf. */
char *tu_format(const char *fmt, ...);

/* Prints "<passed> passed, <failed> failed" for the test program and returns its exit code. */
int tu_finish(const char *test_name);

#ifdef __cplusplus
}
#endif

#endif
