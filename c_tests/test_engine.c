/* What an engine embedding the library relies on (issue 7):
 *
 *   - logs: paimon_cleanup_run_options_set_log routes each operation's log events to the callback
 *     of its own run options only. Three copies of a table, three host threads running orphan
 *     dry runs at the same time: two with different callbacks (DEBUG), one without any; every
 *     event a callback receives names only its own table, both receive events, nothing is ever
 *     installed process-wide (the run without a callback reaches nobody), and no callback is
 *     called after its operation returned. The level filter: WARN gets nothing from a run that
 *     only logs info and debug, INFO gets info lines and nothing more verbose. Setter errors.
 *
 *   - cancellation of a long orphan cleanup from another host thread: a table written by
 *     paimon-gen (medium preset: 1,000 snapshots, ~110,000 files, 20,000 orphans; every file a
 *     candidate with cut-off now). The run is cancelled from a second thread at several moments
 *     (while candidates are listed, while references are read, while orphans are deleted); each
 *     time the call must return CANCELLED within 1 second of the cancel (a case over the limit
 *     is tried once more, for a loaded machine; twice over fails). Afterwards the table
 *     passes the same check as after a normal run: every file that a dry run made before did not
 *     list as deletable (i.e. every referenced file) still exists; an uncancelled rerun then
 *     deletes exactly the dry run's files.
 *
 * The cancellation part needs the generator ($PAIMON_GEN, built by the build_cli test) and
 * skips (exit 77) without it unless PAIMON_REQUIRE_FIXTURES=1. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paimon_cleanup.h"
#include "test_util.h"

/* ---- logs ------------------------------------------------------------------------------------ */

#define MAX_LOG_LINES 20000

typedef struct {
    pthread_mutex_t lock;
    const char *own_root;       /* this run's table directory */
    const char *foreign[2];     /* the other runs' table directories */
    int events;                 /* all events */
    int per_level[6];           /* by PaimonCleanupLogLevel */
    int foreign_events;         /* events naming another run's table */
    int own_path_events;        /* events naming this run's table */
    int bad_events;             /* NULL or empty target/message, level out of range */
    int in_call;                /* the operation is running */
    int after_return;           /* calls while no operation was running */
    int concurrent;             /* overlapping calls (one run's calls must not overlap) */
    int inside;
    char first_foreign[512];
} log_state;

static void log_init(log_state *s, const char *own, const char *f0, const char *f1) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->own_root = own;
    s->foreign[0] = f0;
    s->foreign[1] = f1;
}

static void on_log(void *user_data, int32_t level, const char *target, const char *message) {
    log_state *s = (log_state *)user_data;
    pthread_mutex_lock(&s->lock);
    if (s->inside) s->concurrent++;
    s->inside = 1;
    s->events++;
    if (!s->in_call) s->after_return++;
    if (level >= 1 && level <= 5)
        s->per_level[level]++;
    else
        s->bad_events++;
    if (target == NULL || target[0] == '\0' || message == NULL || message[0] == '\0') {
        s->bad_events++;
    } else {
        int i;
        if (strstr(message, s->own_root) != NULL) s->own_path_events++;
        for (i = 0; i < 2; i++) {
            if (s->foreign[i] != NULL && strstr(message, s->foreign[i]) != NULL) {
                if (s->foreign_events == 0)
                    snprintf(s->first_foreign, sizeof s->first_foreign, "%s: %s", target, message);
                s->foreign_events++;
            }
        }
    }
    s->inside = 0;
    pthread_mutex_unlock(&s->lock);
}

typedef struct {
    const char *table;
    PaimonCleanupExecutor *exec;
    log_state *log; /* NULL = no log callback */
    int32_t min_level;
    int rounds;
    int failures;
} log_run;

static void *log_worker(void *arg) {
    log_run *run = (log_run *)arg;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupOrphanConfig *cfg = NULL;
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupError *err = NULL;
    int i;

    CHECK_OK(paimon_cleanup_context_new(run->table, NULL, NULL, 0, &ctx, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, true, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_no_writers_running(cfg, true, &err), err);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    if (run->log != NULL)
        CHECK_OK(paimon_cleanup_run_options_set_log(opts, on_log, run->min_level, run->log, &err),
                 err);
    for (i = 0; i < run->rounds; i++) {
        PaimonCleanupReport *r = NULL;
        PaimonCleanupStatus st;
        CHECK_OK(paimon_cleanup_orphan_config_set_older_than_ms(cfg, tu_now_ms(), &err), err);
        if (run->log != NULL) {
            pthread_mutex_lock(&run->log->lock);
            run->log->in_call = 1;
            pthread_mutex_unlock(&run->log->lock);
        }
        st = paimon_cleanup_remove_orphan_files(ctx, run->exec, cfg, opts, &r, &err);
        if (run->log != NULL) {
            pthread_mutex_lock(&run->log->lock);
            run->log->in_call = 0;
            pthread_mutex_unlock(&run->log->lock);
        }
        if (st != PAIMON_CLEANUP_STATUS_OK) run->failures++;
        CHECK_OK(st, err);
        paimon_cleanup_report_free(r);
    }
    paimon_cleanup_run_options_free(opts);
    paimon_cleanup_orphan_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    return NULL;
}

static void check_log_setter(void) {
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupError *err = NULL;
    log_state s;

    log_init(&s, "/nonexistent", NULL, NULL);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    CHECK_ERROR(paimon_cleanup_run_options_set_log(NULL, on_log, PAIMON_CLEANUP_LOG_LEVEL_INFO, &s,
                                                   &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "options");
    CHECK_ERROR(paimon_cleanup_run_options_set_log(opts, on_log, 0, &s, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "min_level");
    CHECK_ERROR(paimon_cleanup_run_options_set_log(opts, on_log, 6, &s, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "min_level");
    CHECK_OK(paimon_cleanup_run_options_set_log(opts, on_log, PAIMON_CLEANUP_LOG_LEVEL_TRACE, &s,
                                                &err),
             err);
    /* Removing the callback ignores the level. */
    CHECK_OK(paimon_cleanup_run_options_set_log(opts, NULL, 99, NULL, &err), err);
    paimon_cleanup_run_options_free(opts);
    CHECK_EQ_I64(s.events, 0);
    printf("  setter: NULL options, levels 0 and 6 refused; NULL callback clears\n");
}

static void check_logs(const char *fixtures, PaimonCleanupExecutor *exec) {
    const char *relative = "orc/pk_09.db/pk_09";
    char *tmp[3] = {NULL, NULL, NULL}, *table[3] = {NULL, NULL, NULL};
    log_state a, b, warn_only, info_only;
    log_run runs[3];
    pthread_t threads[3];
    int i;

    printf("logs: three orphan dry runs at once on three copies of %s\n", relative);
    check_log_setter();
    for (i = 0; i < 3; i++) {
        table[i] = tu_copy_fixture_table(fixtures, relative, &tmp[i]);
        CHECK_MSG(table[i] != NULL, "cannot copy %s", relative);
        if (table[i] == NULL) goto out;
    }
    /* Events name tables by their full path: match on the temp dirs, which are distinct. */
    log_init(&a, tmp[0], tmp[1], tmp[2]);
    log_init(&b, tmp[1], tmp[0], tmp[2]);
    memset(runs, 0, sizeof runs);
    for (i = 0; i < 3; i++) {
        runs[i].table = table[i];
        runs[i].exec = exec;
        runs[i].rounds = 5;
        runs[i].min_level = PAIMON_CLEANUP_LOG_LEVEL_DEBUG;
    }
    runs[0].log = &a;
    runs[1].log = &b;
    runs[2].log = NULL; /* no callback: its events must reach nobody */
    for (i = 0; i < 3; i++) CHECK(pthread_create(&threads[i], NULL, log_worker, &runs[i]) == 0);
    for (i = 0; i < 3; i++) pthread_join(threads[i], NULL);
    for (i = 0; i < 3; i++) CHECK_EQ_I64(runs[i].failures, 0);

    CHECK_MSG(a.events > 0 && b.events > 0, "a callback got no events (a %d, b %d)", a.events,
              b.events);
    CHECK_MSG(a.per_level[PAIMON_CLEANUP_LOG_LEVEL_DEBUG] > 0 &&
                  b.per_level[PAIMON_CLEANUP_LOG_LEVEL_DEBUG] > 0,
              "DEBUG callbacks got no debug events");
    CHECK_MSG(a.own_path_events > 0 && b.own_path_events > 0,
              "no event named the run's own table (a %d, b %d)", a.own_path_events,
              b.own_path_events);
    CHECK_MSG(a.foreign_events == 0, "callback a got %d events of other runs, first: %s",
              a.foreign_events, a.first_foreign);
    CHECK_MSG(b.foreign_events == 0, "callback b got %d events of other runs, first: %s",
              b.foreign_events, b.first_foreign);
    CHECK_EQ_I64(a.per_level[PAIMON_CLEANUP_LOG_LEVEL_TRACE], 0);
    CHECK_EQ_I64(a.bad_events + b.bad_events, 0);
    CHECK_EQ_I64(a.after_return + b.after_return, 0);
    CHECK_EQ_I64(a.concurrent + b.concurrent, 0);
    printf("  a: %d events (%d naming its table), b: %d events (%d); none crossed, none after "
           "return\n",
           a.events, a.own_path_events, b.events, b.own_path_events);

    /* Level filter: these dry runs log info and debug events only, never warnings. */
    log_init(&warn_only, tmp[0], tmp[1], tmp[2]);
    log_init(&info_only, tmp[1], tmp[0], tmp[2]);
    memset(runs, 0, sizeof runs);
    runs[0].table = table[0];
    runs[0].log = &warn_only;
    runs[0].min_level = PAIMON_CLEANUP_LOG_LEVEL_WARN;
    runs[1].table = table[1];
    runs[1].log = &info_only;
    runs[1].min_level = PAIMON_CLEANUP_LOG_LEVEL_INFO;
    for (i = 0; i < 2; i++) {
        runs[i].exec = exec;
        runs[i].rounds = 1;
        log_worker(&runs[i]);
        CHECK_EQ_I64(runs[i].failures, 0);
    }
    CHECK_EQ_I64(warn_only.events, 0);
    CHECK_MSG(info_only.per_level[PAIMON_CLEANUP_LOG_LEVEL_INFO] > 0, "INFO got no info events");
    CHECK_EQ_I64(info_only.per_level[PAIMON_CLEANUP_LOG_LEVEL_DEBUG] +
                     info_only.per_level[PAIMON_CLEANUP_LOG_LEVEL_TRACE],
                 0);
    printf("  level filter: WARN got %d events, INFO got %d (none more verbose)\n",
           warn_only.events, info_only.events);

out:
    for (i = 0; i < 3; i++) {
        if (tmp[i] != NULL) tu_remove_tree(tmp[i]);
        free(table[i]);
        free(tmp[i]);
    }
}

/* ---- cancellation of a long orphan cleanup --------------------------------------------------- */

static long long mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* When the canceller fires: a delay after the run started, or after the first progress call of
 * a phase whose name contains `after_phase` (with `half`: the first one reporting at least half
 * of the phase's total done). */
typedef struct {
    pthread_mutex_t lock;
    const char *after_phase; /* NULL: count from the start */
    long delay_ms;
    int half;
    long long phase_seen_ms; /* when `after_phase` was first reported, 0 before */
    long long started_ms;
    long long cancelled_ms; /* when cancel() was called, 0 before */
    int done;               /* the call returned */
    char phase_at_cancel[96];
    char last_phase[96];
    PaimonCleanupCancelToken *token;
} canceller;

static void on_cancel_progress(void *user_data, const char *phase, uint64_t done, uint64_t total,
                               uint64_t bytes) {
    canceller *c = (canceller *)user_data;
    (void)bytes;
    pthread_mutex_lock(&c->lock);
    snprintf(c->last_phase, sizeof c->last_phase, "%s %llu/%llu", phase, (unsigned long long)done,
             (unsigned long long)total);
    if (c->after_phase != NULL && c->phase_seen_ms == 0 && strstr(phase, c->after_phase) != NULL &&
        (!c->half || done * 2 >= total))
        c->phase_seen_ms = mono_ms();
    pthread_mutex_unlock(&c->lock);
}

static void *canceller_thread(void *arg) {
    canceller *c = (canceller *)arg;
    for (;;) {
        long long now = mono_ms(), from;
        pthread_mutex_lock(&c->lock);
        if (c->done) {
            pthread_mutex_unlock(&c->lock);
            return NULL;
        }
        from = c->after_phase == NULL ? c->started_ms : c->phase_seen_ms;
        if (from != 0 && now >= from + c->delay_ms) {
            snprintf(c->phase_at_cancel, sizeof c->phase_at_cancel, "%s",
                     c->last_phase[0] ? c->last_phase : "(before any progress)");
            c->cancelled_ms = mono_ms();
            pthread_mutex_unlock(&c->lock);
            paimon_cleanup_cancel_token_cancel(c->token);
            return NULL;
        }
        pthread_mutex_unlock(&c->lock);
        sleep_ms(5);
    }
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The relative paths of the files of a tu_list_tree listing, sorted (pointers into `listing`,
 * which is modified). */
static char **file_paths(char *listing, size_t *count) {
    size_t n = 0, cap = 1024;
    char **out = (char **)malloc(cap * sizeof *out);
    char *line = listing, *next;
    for (; line != NULL && *line != '\0'; line = next) {
        char *space;
        next = strchr(line, '\n');
        if (next != NULL) *next++ = '\0';
        if (line[0] != 'f' || line[1] != ' ') continue;
        space = strrchr(line + 2, ' '); /* "f <path> <size>" */
        if (space != NULL) *space = '\0';
        if (n == cap) out = (char **)realloc(out, (cap *= 2) * sizeof *out);
        out[n++] = line + 2;
    }
    qsort(out, n, sizeof *out, cmp_str);
    *count = n;
    return out;
}

static int contains(char **sorted, size_t n, const char *path) {
    return bsearch(&path, sorted, n, sizeof *sorted, cmp_str) != NULL;
}

/* Files of `before` that are not in `deletable` and are missing from `table` now. */
static size_t missing_kept_files(char **before, size_t n_before, char **deletable,
                                 size_t n_deletable, const char *table, char *first, size_t cap) {
    char *now_listing = tu_list_tree(table, 0);
    size_t n_now = 0, i, missing = 0;
    char **now;
    if (now_listing == NULL) return n_before;
    now = file_paths(now_listing, &n_now);
    for (i = 0; i < n_before; i++) {
        if (contains(deletable, n_deletable, before[i])) continue;
        if (!contains(now, n_now, before[i])) {
            if (missing == 0) snprintf(first, cap, "%s", before[i]);
            missing++;
        }
    }
    free(now);
    free(now_listing);
    return missing;
}

typedef struct {
    const char *name;
    const char *after_phase;
    long delay_ms;
    int half;
} cancel_case;

static void check_cancel_long_orphan_run(PaimonCleanupExecutor *exec) {
    static const cancel_case CASES[] = {
        {"while listing candidates", NULL, 150, 0},
        {"while reading references", "read references", 0, 0},
        {"while reading references (half done)", "read references", 0, 1},
        {"while deleting orphans", "data files", 0, 0},
    };
    const char *gen = getenv("PAIMON_GEN");
    char *tmp = NULL, *table = NULL, *cmd, *out, *before_listing = NULL, *final_listing = NULL;
    char **before = NULL, **deletable = NULL, **final_files = NULL;
    size_t n_before = 0, n_deletable = 0, n_final = 0, i;
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupOrphanConfig *cfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    long long t0;
    int code = 0, attempt = 0, slow_again = 0;
    char first[1024];

    printf("cancelling a long orphan cleanup from another thread\n");
    if (gen == NULL || gen[0] == '\0') gen = "target/release/paimon-gen";
    if (!tu_exists(gen)) {
        const char *require = getenv("PAIMON_REQUIRE_FIXTURES");
        if (require != NULL && strcmp(require, "1") == 0) {
            CHECK_MSG(0, "generator %s not found", gen);
        } else {
            printf("  SKIP: generator %s not found (cargo build --release --bin paimon-gen)\n", gen);
        }
        return;
    }
    tmp = tu_make_temp_dir();
    table = tu_format("%s/t", tmp);
    t0 = mono_ms();
    cmd = tu_format("'%s' '%s' --size medium --orphans 20000 > /dev/null 2>&1", gen, table);
    out = tu_run_capture(cmd, &code);
    free(out);
    free(cmd);
    CHECK_MSG(code == 0, "paimon-gen failed (%d)", code);
    if (code != 0) goto out;
    printf("  generated %s in %lld ms\n", table, mono_ms() - t0);

    CHECK_OK(paimon_cleanup_context_new(table, NULL, NULL, 0, &ctx, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_no_writers_running(cfg, true, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_older_than_ms(cfg, tu_now_ms(), &err), err);

    /* The dry run names every deletable file; everything else is referenced. */
    before_listing = tu_list_tree(table, 0);
    CHECK(before_listing != NULL);
    if (before_listing == NULL) goto out;
    before = file_paths(before_listing, &n_before);
    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, true, &err), err);
    t0 = mono_ms();
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    if (r == NULL) goto out;
    n_deletable = paimon_cleanup_report_path_count(r);
    deletable = (char **)malloc((n_deletable + 1) * sizeof *deletable);
    for (i = 0; i < n_deletable; i++) deletable[i] = strdup(paimon_cleanup_report_path(r, i));
    qsort(deletable, n_deletable, sizeof *deletable, cmp_str);
    printf("  dry run: %zu files, %zu deletable, %lld ms\n", n_before, n_deletable,
           mono_ms() - t0);
    CHECK_MSG(n_deletable >= 20000, "the dry run found only %zu orphans", n_deletable);
    paimon_cleanup_report_free(r);
    r = NULL;
    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, false, &err), err);

    /* A case over the limit is tried once more (a loaded machine can delay one wake-up); over
     * the limit twice fails. */
    for (i = 0, attempt = 0; i < sizeof CASES / sizeof CASES[0]; attempt = 0, i++) {
    retry:;
        canceller c;
        pthread_t thread;
        PaimonCleanupRunOptions *opts = NULL;
        PaimonCleanupStatus st;
        long long returned, latency;
        size_t missing;

        memset(&c, 0, sizeof c);
        pthread_mutex_init(&c.lock, NULL);
        c.after_phase = CASES[i].after_phase;
        c.delay_ms = CASES[i].delay_ms;
        c.half = CASES[i].half;
        CHECK_OK(paimon_cleanup_cancel_token_new(&c.token, &err), err);
        CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
        CHECK_OK(paimon_cleanup_run_options_set_cancel_token(opts, c.token, &err), err);
        CHECK_OK(paimon_cleanup_run_options_set_progress(opts, on_cancel_progress, &c, &err), err);
        c.started_ms = mono_ms();
        CHECK(pthread_create(&thread, NULL, canceller_thread, &c) == 0);
        st = paimon_cleanup_remove_orphan_files(ctx, exec, cfg, opts, &r, &err);
        returned = mono_ms();
        pthread_mutex_lock(&c.lock);
        c.done = 1;
        pthread_mutex_unlock(&c.lock);
        pthread_join(thread, NULL);
        latency = returned - c.cancelled_ms;
        if (c.cancelled_ms == 0) {
            CHECK_MSG(0, "%s: the run ended (status %d) after %lld ms, before the cancel",
                      CASES[i].name, (int)st, returned - c.started_ms);
        } else {
            printf("  %s: cancelled at %lld ms (last progress: %s), returned %s %lld ms later\n",
                   CASES[i].name, c.cancelled_ms - c.started_ms, c.phase_at_cancel,
                   paimon_cleanup_status_name(st), latency);
            CHECK_ERROR(st, PAIMON_CLEANUP_STATUS_CANCELLED, err, "cancel");
            if (latency > 1000 && attempt == 0) {
                printf("  %s: %lld ms > 1000 ms; trying once more\n", CASES[i].name, latency);
                slow_again = 1;
            } else {
                CHECK_MSG(latency <= 1000, "%s: returned %lld ms after the cancel (limit 1000)",
                          CASES[i].name, latency);
            }
        }
        paimon_cleanup_report_free(r);
        r = NULL;
        paimon_cleanup_error_free(err);
        err = NULL;
        paimon_cleanup_run_options_free(opts);
        paimon_cleanup_cancel_token_free(c.token);
        pthread_mutex_destroy(&c.lock);

        /* Safety: every file the dry run did not list as deletable is still there. */
        missing = missing_kept_files(before, n_before, deletable, n_deletable, table, first,
                                     sizeof first);
        CHECK_MSG(missing == 0, "%s: %zu referenced files are gone, e.g. %s", CASES[i].name,
                  missing, first);
        if (slow_again) {
            slow_again = 0;
            attempt = 1;
            goto retry;
        }
    }

    /* An uncancelled rerun finishes the job: exactly the dry run's files are gone. */
    CHECK_OK(paimon_cleanup_orphan_config_set_older_than_ms(cfg, tu_now_ms(), &err), err);
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    paimon_cleanup_report_free(r);
    r = NULL;
    final_listing = tu_list_tree(table, 0);
    CHECK(final_listing != NULL);
    if (final_listing != NULL) {
        size_t expected = 0, wrong = 0;
        final_files = file_paths(final_listing, &n_final);
        for (i = 0; i < n_before; i++) {
            int gone = contains(deletable, n_deletable, before[i]);
            if (!gone) expected++;
            if (gone == contains(final_files, n_final, before[i])) wrong++;
        }
        CHECK_MSG(wrong == 0 && n_final == expected,
                  "after the rerun: %zu files differ from a normal run's end state (%zu files, "
                  "expected %zu)",
                  wrong, n_final, expected);
        printf("  rerun: %zu files left = the files the dry run did not list\n", n_final);
    }

out:
    if (deletable != NULL)
        for (i = 0; i < n_deletable; i++) free(deletable[i]);
    free(deletable);
    free(before);
    free(final_files);
    free(before_listing);
    free(final_listing);
    paimon_cleanup_orphan_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    if (tmp != NULL) tu_remove_tree(tmp);
    free(table);
    free(tmp);
}

int main(void) {
    const char *fixtures = tu_fixtures_dir();
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;

    if (fixtures == NULL) return tu_missing_fixtures("test_engine");
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    if (exec == NULL) return tu_finish("test_engine");
    check_logs(fixtures, exec);
    check_cancel_long_orphan_run(exec);
    paimon_cleanup_executor_free(exec);
    return tu_finish("test_engine");
}
