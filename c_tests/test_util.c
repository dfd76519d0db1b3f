#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PAIMON_CLEANUP_SOURCE_DIR
#define PAIMON_CLEANUP_SOURCE_DIR "."
#endif

int tu_failures = 0;
static pthread_mutex_t tu_lock = PTHREAD_MUTEX_INITIALIZER;

void tu_fail(const char *file, int line, const char *fmt, ...) {
    va_list args;
    pthread_mutex_lock(&tu_lock);
    tu_failures++;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    fflush(stderr);
    pthread_mutex_unlock(&tu_lock);
}

void tu_check_error(const char *file, int line, int status, int expected, PaimonCleanupError **err,
                    const char *needle) {
    const char *message = paimon_cleanup_error_message(*err);
    if (status != expected) {
        tu_fail(file, line, "expected status %d (%s), got %d (%s): %s", expected,
                paimon_cleanup_status_name(expected), status, paimon_cleanup_status_name(status),
                message);
    } else if (*err == NULL) {
        tu_fail(file, line, "status %d but no error object", status);
    } else if ((int)paimon_cleanup_error_status(*err) != status) {
        tu_fail(file, line, "error object status %d differs from returned %d",
                (int)paimon_cleanup_error_status(*err), status);
    } else if (message[0] == '\0') {
        tu_fail(file, line, "empty error message for status %d", status);
    } else if (needle != NULL && strstr(message, needle) == NULL) {
        tu_fail(file, line, "error message \"%s\" does not contain \"%s\"", message, needle);
    }
    paimon_cleanup_error_free(*err);
    *err = NULL;
}

void tu_check_ok(const char *file, int line, int status, PaimonCleanupError **err) {
    if (status != PAIMON_CLEANUP_STATUS_OK) {
        tu_fail(file, line, "expected OK, got %d (%s): %s", status,
                paimon_cleanup_status_name(status), paimon_cleanup_error_message(*err));
    } else if (*err != NULL) {
        tu_fail(file, line, "OK but an error object was returned");
    }
    paimon_cleanup_error_free(*err);
    *err = NULL;
}

static int is_dir(const char *path) {
    struct stat st;
    return path != NULL && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *tu_fixtures_dir(void) {
    static char fallback[4096];
    const char *env = getenv("PAIMON_FIXTURES");
    if (env != NULL && env[0] != '\0') return is_dir(env) ? env : NULL;
    snprintf(fallback, sizeof fallback, "%s/../shared/fixtures/java-written-tables",
             PAIMON_CLEANUP_SOURCE_DIR);
    return is_dir(fallback) ? fallback : NULL;
}

int tu_missing_fixtures(const char *test_name) {
    const char *require = getenv("PAIMON_REQUIRE_FIXTURES");
    if (require != NULL && strcmp(require, "1") == 0) {
        printf("FAIL %s: fixture tables not found (PAIMON_FIXTURES or "
               "../shared/fixtures/java-written-tables) and PAIMON_REQUIRE_FIXTURES=1\n",
               test_name);
        return 1;
    }
    printf("SKIP %s: fixture tables not found (set PAIMON_FIXTURES)\n", test_name);
    return TU_SKIP;
}

char *tu_make_temp_dir(void) {
    const char *base = getenv("TMPDIR");
    char *templ = tu_format("%s/paimon-cleanup-ctest-XXXXXX",
                            (base != NULL && base[0] != '\0') ? base : "/tmp");
    if (mkdtemp(templ) == NULL) {
        fprintf(stderr, "mkdtemp(%s): %s\n", templ, strerror(errno));
        exit(1);
    }
    return templ;
}

char *tu_copy_fixture_table(const char *fixtures, const char *relative, char **tmp_root) {
    char *root = tu_make_temp_dir();
    const char *name = strrchr(relative, '/');
    char *dst = tu_format("%s/%s", root, name != NULL ? name + 1 : relative);
    char *cmd = tu_format("cp -R '%s/%s' '%s'", fixtures, relative, dst);
    int rc = system(cmd);
    free(cmd);
    if (rc != 0) {
        fprintf(stderr, "copying fixture %s failed\n", relative);
        tu_remove_tree(root);
        free(root);
        free(dst);
        *tmp_root = NULL;
        return NULL;
    }
    /* The shared copy is read-only; the copy must be writable. */
    cmd = tu_format("chmod -R u+w '%s'", dst);
    if (system(cmd) != 0) fprintf(stderr, "chmod on %s failed\n", dst);
    free(cmd);
    *tmp_root = root;
    return dst;
}

void tu_remove_tree(const char *dir) {
    char *cmd;
    if (dir == NULL || dir[0] == '\0' || strcmp(dir, "/") == 0) return;
    cmd = tu_format("rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "rm -rf %s failed\n", dir);
    free(cmd);
}

char *tu_run_capture(const char *command, int *exit_code) {
    FILE *pipe = popen(command, "r");
    size_t cap = 4096, len = 0;
    char *out;
    int status;
    if (pipe == NULL) return NULL;
    out = (char *)malloc(cap);
    if (out == NULL) {
        pclose(pipe);
        return NULL;
    }
    for (;;) {
        size_t n;
        if (len + 1024 + 1 > cap) {
            char *bigger;
            cap *= 2;
            bigger = (char *)realloc(out, cap);
            if (bigger == NULL) {
                free(out);
                pclose(pipe);
                return NULL;
            }
            out = bigger;
        }
        n = fread(out + len, 1, 1024, pipe);
        if (n == 0) break;
        len += n;
    }
    out[len] = '\0';
    status = pclose(pipe);
    if (exit_code != NULL) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

int tu_write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    size_t len = strlen(text);
    int rc;
    if (f == NULL) return -1;
    rc = fwrite(text, 1, len, f) == len ? 0 : -1;
    if (fclose(f) != 0) rc = -1;
    return rc;
}

int tu_count_entries(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int count = 0;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) count++;
    }
    closedir(d);
    return count;
}

long long tu_max_numbered_entry(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    struct dirent *e;
    long long best = -1;
    size_t plen = strlen(prefix);
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL) {
        char *end = NULL;
        long long n;
        if (strncmp(e->d_name, prefix, plen) != 0 || e->d_name[plen] == '\0') continue;
        n = strtoll(e->d_name + plen, &end, 10);
        if (end != NULL && *end == '\0' && n > best) best = n;
    }
    closedir(d);
    return best;
}

char *tu_format(const char *fmt, ...) {
    va_list args;
    int n;
    char *out;
    va_start(args, fmt);
    n = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    if (n < 0) exit(1);
    out = (char *)malloc((size_t)n + 1);
    if (out == NULL) exit(1);
    va_start(args, fmt);
    vsnprintf(out, (size_t)n + 1, fmt, args);
    va_end(args);
    return out;
}

int tu_finish(const char *test_name) {
    if (tu_failures == 0) {
        printf("PASS %s\n", test_name);
        return 0;
    }
    printf("FAIL %s: %d failed check(s)\n", test_name, tu_failures);
    return 1;
}

char *tu_list_tree(const char *dir, int with_times) {
    char *cmd = tu_format("cd '%s' && find . -mindepth 1 \\( -type d -printf 'd %%P\\n' \\) -o "
                          "\\( -type f -printf 'f %%P %%s%s\\n' \\) | LC_ALL=C sort",
                          dir, with_times ? " %T@" : "");
    int exit_code = -1;
    char *out = tu_run_capture(cmd, &exit_code);
    free(cmd);
    if (out != NULL && exit_code != 0) {
        free(out);
        return NULL;
    }
    return out;
}

int tu_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

long long tu_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tu_print_first_difference(const char *a, const char *b) {
    size_t line = 1;
    const char *pa = a, *pb = b;
    if (a == NULL || b == NULL) return;
    while (*pa != '\0' || *pb != '\0') {
        const char *ea = strchr(pa, '\n'), *eb = strchr(pb, '\n');
        size_t la = ea != NULL ? (size_t)(ea - pa) : strlen(pa);
        size_t lb = eb != NULL ? (size_t)(eb - pb) : strlen(pb);
        if (la != lb || strncmp(pa, pb, la) != 0) {
            fprintf(stderr, "  first difference at line %zu:\n    < %.*s\n    > %.*s\n", line,
                    (int)la, pa, (int)lb, pb);
            return;
        }
        pa += la + (ea != NULL);
        pb += lb + (eb != NULL);
        line++;
    }
}
