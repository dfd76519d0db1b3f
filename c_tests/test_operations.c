/* Every maintenance operation beyond snapshot expiry, through the C ABI, on copies of
 * Java-written tables. Each scenario runs the C call on one copy and the CLI with the same inputs
 * on a second copy, then checks:
 *   - paimon_cleanup_report_json() equals the CLI's --json output (except elapsed times);
 *   - the typed accessors agree with that JSON;
 *   - both copies end up with identical directory listings;
 *   - dry runs change nothing (listing with sizes and mtimes before == after).
 * Operations: expire_changelogs (decoupled lifecycle, then delete-all), delete_tag (incl. a
 * missing tag), expire_tags, expire_consumers, remove_orphan_files (veto callback, cut-off
 * rules), drop_partitions (specs as key/value arrays), expire_partitions (config handle),
 * maintain (steps), plus cancellation before the run for every operation. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mini_json.h"
#include "paimon_cleanup.h"
#include "test_util.h"

static const char *fixtures;
static PaimonCleanupExecutor *exec;

static const char *cli_path(void) {
    const char *cli = getenv("PAIMON_CLEANUP_CLI");
    return (cli != NULL && cli[0] != '\0') ? cli : "target/release/paimon-cleanup";
}

/* ---- two copies of a table ------------------------------------------------------------------ */

typedef struct {
    char *tmp_a, *tmp_b;
    char *a; /* driven through the C ABI */
    char *b; /* driven through the CLI */
} pair;

static int pair_open(pair *p, const char *relative) {
    memset(p, 0, sizeof *p);
    p->a = tu_copy_fixture_table(fixtures, relative, &p->tmp_a);
    p->b = tu_copy_fixture_table(fixtures, relative, &p->tmp_b);
    if (p->a == NULL || p->b == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy %s", relative);
        return 0;
    }
    return 1;
}

static void pair_close(pair *p) {
    tu_remove_tree(p->tmp_a);
    tu_remove_tree(p->tmp_b);
    free(p->tmp_a);
    free(p->tmp_b);
    free(p->a);
    free(p->b);
}

/* Runs a shell command on both copies: `fmt` gets the table path for %s (up to 5 times). */
static void both_shell(const pair *p, const char *fmt) {
    const char *tables[2];
    int i;
    tables[0] = p->a;
    tables[1] = p->b;
    for (i = 0; i < 2; i++) {
        char *cmd = tu_format(fmt, tables[i], tables[i], tables[i], tables[i], tables[i]);
        CHECK_MSG(system(cmd) == 0, "`%s` failed", cmd);
        free(cmd);
    }
}

/* Listing of `dir` without sizes and with every UUID replaced by "UUID", re-sorted: files written
 * by two commits of the same change have random names, and their Avro encodings may differ by a
 * few bytes (variable-length numbers). */
static char *list_tree_without_uuids(const char *dir) {
    char *cmd = tu_format("cd '%s' && find . -mindepth 1 \\( -type d -printf 'd %%P\\n' \\) -o "
                          "\\( -type f -printf 'f %%P\\n' \\) | sed -E "
                          "'s/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g' "
                          "| LC_ALL=C sort",
                          dir);
    int exit_code = -1;
    char *out = tu_run_capture(cmd, &exit_code);
    free(cmd);
    if (out != NULL && exit_code != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* Both copies have the same files (same names and sizes; with `uuids_differ`, the same names up
 * to the UUIDs that commits put in new file names). */
static void check_same_tables(const pair *p, const char *what, int uuids_differ) {
    char *la = uuids_differ ? list_tree_without_uuids(p->a) : tu_list_tree(p->a, 0);
    char *lb = uuids_differ ? list_tree_without_uuids(p->b) : tu_list_tree(p->b, 0);
    CHECK_MSG(la != NULL && lb != NULL && strcmp(la, lb) == 0,
              "%s: the C ABI copy and the CLI copy differ", what);
    if (la != NULL && lb != NULL && strcmp(la, lb) != 0) tu_print_first_difference(la, lb);
    free(la);
    free(lb);
}

static void check_same_listing(const pair *p, const char *what) { check_same_tables(p, what, 0); }

static PaimonCleanupContext *context_with(const char *table, const char *const *kv, size_t n) {
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    const char *keys[8], *values[8];
    size_t i;
    for (i = 0; i < n && i < 8; i++) {
        keys[i] = kv[2 * i];
        values[i] = kv[2 * i + 1];
    }
    CHECK_OK(paimon_cleanup_context_new(table, keys, values, n, &ctx, &err), err);
    return ctx;
}

/* ---- CLI and JSON ---------------------------------------------------------------------------- */

/* Runs `paimon-cleanup <args with %s = table> --json` and parses the output. */
static mj_value *cli_json(const char *args_fmt, const char *table) {
    int exit_code = -1;
    char *args = tu_format(args_fmt, table);
    char *cmd = tu_format("'%s' %s --json 2>/dev/null", cli_path(), args);
    char *out = tu_run_capture(cmd, &exit_code);
    mj_value *json = NULL;
    if (out == NULL || exit_code != 0) {
        tu_fail(__FILE__, __LINE__, "`%s` failed (exit %d)", cmd, exit_code);
    } else if ((json = mj_parse(out)) == NULL || json->type != MJ_OBJECT) {
        tu_fail(__FILE__, __LINE__, "`%s` did not print a JSON object:\n%s", cmd, out);
        mj_free(json);
        json = NULL;
    }
    free(out);
    free(cmd);
    free(args);
    return json;
}

static int skipped_key(const char *key, const char *const *skip) {
    for (; skip != NULL && *skip != NULL; skip++)
        if (strcmp(key, *skip) == 0) return 1;
    return 0;
}

/* Deep equality; object members named in `skip` are ignored at any depth. Reports the first
 * difference with its path. */
static int json_equal(const mj_value *a, const mj_value *b, const char *const *skip,
                      const char *path) {
    size_t i;
    if (a->type != b->type) {
        fprintf(stderr, "  JSON differs at %s: type %d vs %d\n", path, (int)a->type, (int)b->type);
        return 0;
    }
    switch (a->type) {
    case MJ_NULL:
        return 1;
    case MJ_BOOL:
        if (a->boolean == b->boolean) return 1;
        break;
    case MJ_NUMBER:
        if (a->number == b->number) return 1;
        break;
    case MJ_STRING:
        if (strcmp(a->string, b->string) == 0) return 1;
        fprintf(stderr, "  JSON differs at %s: \"%s\" vs \"%s\"\n", path, a->string, b->string);
        return 0;
    case MJ_ARRAY:
        if (a->count != b->count) break;
        for (i = 0; i < a->count; i++) {
            char *sub = tu_format("%s[%zu]", path, i);
            int same = json_equal(&a->items[i], &b->items[i], skip, sub);
            free(sub);
            if (!same) return 0;
        }
        return 1;
    case MJ_OBJECT: {
        size_t na = 0, nb = 0;
        for (i = 0; i < a->count; i++) na += !skipped_key(a->keys[i], skip);
        for (i = 0; i < b->count; i++) nb += !skipped_key(b->keys[i], skip);
        if (na != nb) break;
        for (i = 0; i < a->count; i++) {
            const mj_value *other;
            char *sub;
            int same;
            if (skipped_key(a->keys[i], skip)) continue;
            other = mj_get(b, a->keys[i]);
            sub = tu_format("%s.%s", path, a->keys[i]);
            if (other == NULL) {
                fprintf(stderr, "  JSON differs at %s: missing on one side\n", sub);
                free(sub);
                return 0;
            }
            same = json_equal(&a->items[i], other, skip, sub);
            free(sub);
            if (!same) return 0;
        }
        return 1;
    }
    }
    fprintf(stderr, "  JSON differs at %s (count/value)\n", path);
    return 0;
}

static const char *const SKIP_TIMES[] = {"elapsed_ms", NULL};

/* The report's JSON equals the CLI's (elapsed times aside). Returns the parsed report JSON (free
 * with mj_free). */
static mj_value *check_json_matches_cli(const PaimonCleanupReport *r, const mj_value *cli,
                                        const char *const *skip, const char *what) {
    mj_value *ours = mj_parse(paimon_cleanup_report_json(r));
    CHECK_MSG(ours != NULL && ours->type == MJ_OBJECT, "%s: report JSON does not parse", what);
    if (ours != NULL && cli != NULL)
        CHECK_MSG(json_equal(ours, cli, skip, "$"), "%s: report JSON differs from the CLI's", what);
    return ours;
}

static long long jint(const mj_value *object, const char *key) {
    const mj_value *v = object != NULL ? mj_get(object, key) : NULL;
    return (v != NULL && v->type == MJ_NUMBER) ? v->integer : -1;
}

/* The common accessors agree with a report JSON that has a "deletion" member. */
static void check_deletion_accessors(const PaimonCleanupReport *r, const mj_value *json) {
    const mj_value *deletion = mj_get(json, "deletion");
    const mj_value *deleted = deletion != NULL ? mj_get(deletion, "deleted") : NULL;
    const mj_value *paths = deletion != NULL ? mj_get(deletion, "paths") : NULL;
    const mj_value *failed = deletion != NULL ? mj_get(deletion, "failed") : NULL;
    int c;
    size_t i;
    if (deleted == NULL || paths == NULL || failed == NULL) {
        tu_fail(__FILE__, __LINE__, "report JSON lacks deletion.{deleted,paths,failed}");
        return;
    }
    for (c = 0; c < PAIMON_CLEANUP_FILE_CLASS_COUNT; c++) {
        const mj_value *count = mj_get(deleted, paimon_cleanup_file_class_name(c));
        CHECK_EQ_I64(paimon_cleanup_report_files(r, c), count != NULL ? jint(count, "files") : 0);
        CHECK_EQ_I64(paimon_cleanup_report_bytes(r, c), count != NULL ? jint(count, "bytes") : 0);
    }
    CHECK_EQ_I64(paimon_cleanup_report_path_count(r), paths->count);
    for (i = 0; i < paths->count; i++) {
        const mj_value *path = mj_get(&paths->items[i], "path");
        const mj_value *class_name = mj_get(&paths->items[i], "class");
        const char *ours = paimon_cleanup_report_path(r, i);
        CHECK(path != NULL && ours != NULL && strcmp(ours, path->string) == 0);
        CHECK(class_name != NULL &&
              strcmp(paimon_cleanup_file_class_name(paimon_cleanup_report_path_class(r, i)),
                     class_name->string) == 0);
    }
    CHECK_EQ_I64(paimon_cleanup_report_failed_count(r), failed->count);
    CHECK_EQ_I64(paimon_cleanup_report_dirs_removed(r), jint(deletion, "dirs_removed"));
}

/* Files deleted over all classes in a report JSON with a "deletion" member. */
static long long json_total_files(const mj_value *json) {
    const mj_value *deletion = mj_get(json, "deletion");
    const mj_value *deleted = deletion != NULL ? mj_get(deletion, "deleted") : NULL;
    long long total = 0;
    size_t i;
    if (deleted == NULL) return -1;
    for (i = 0; i < deleted->count; i++) total += jint(&deleted->items[i], "files");
    return total;
}

/* The name list equals a JSON array of strings. */
static void check_names(const PaimonCleanupReport *r, const mj_value *array,
                        size_t (*count)(const PaimonCleanupReport *),
                        const char *(*get)(const PaimonCleanupReport *, size_t)) {
    size_t i;
    if (array == NULL || array->type != MJ_ARRAY) {
        tu_fail(__FILE__, __LINE__, "expected a JSON array of names");
        return;
    }
    CHECK_EQ_I64(count(r), array->count);
    for (i = 0; i < array->count && i < count(r); i++)
        CHECK_MSG(strcmp(get(r, i), array->items[i].string) == 0, "name %zu: %s vs %s", i,
                  get(r, i), array->items[i].string);
}

/* ---- the scenarios --------------------------------------------------------------------------- */

static void check_changelogs(void) {
    static const char *const OPTIONS[] = {"changelog.num-retained.max", "100",
                                          "changelog.num-retained.min", "50"};
    pair p;
    PaimonCleanupContext *ctx;
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    mj_value *cli = NULL, *ours = NULL;
    char *before, *after;

    printf("expire_changelogs (orc/pk_09, decoupled changelog lifecycle)\n");
    if (!pair_open(&p, "orc/pk_09.db/pk_09")) return;
    ctx = context_with(p.a, OPTIONS, 2);
    CHECK_OK(paimon_cleanup_expire_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_min(cfg, 1, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_time_retained_ms(cfg, 0, &err), err);

    /* Snapshot expiry with the decoupled lifecycle turns expired snapshots into changelogs. */
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &r, &err), err);
    cli = cli_json("expire-snapshots '%s' --retain-min 1 --time-retained 0s "
                   "-o changelog.num-retained.max=100 -o changelog.num-retained.min=50",
                   p.b);
    mj_free(check_json_matches_cli(r, cli, SKIP_TIMES, "expire_snapshots (decoupled)"));
    CHECK(paimon_cleanup_report_changelogs_written(r) > 0);
    CHECK_EQ_I64(paimon_cleanup_report_changelogs_written(r), jint(cli, "changelogs_written"));
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);

    /* Dry run of the changelog expiry: nothing changes. */
    CHECK_OK(paimon_cleanup_expire_config_set_dry_run(cfg, true, &err), err);
    before = tu_list_tree(p.a, 1);
    CHECK_OK(paimon_cleanup_expire_changelogs(ctx, exec, cfg, NULL, &r, &err), err);
    after = tu_list_tree(p.a, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "the dry run changed the table");
    CHECK(paimon_cleanup_report_dry_run(r));
    CHECK(paimon_cleanup_report_expired_count(r) > 0);
    free(before);
    free(after);
    paimon_cleanup_report_free(r);
    r = NULL;

    /* The real run. */
    CHECK_OK(paimon_cleanup_expire_config_set_dry_run(cfg, false, &err), err);
    CHECK_OK(paimon_cleanup_expire_changelogs(ctx, exec, cfg, NULL, &r, &err), err);
    cli = cli_json("expire-changelogs '%s' --retain-min 1 --time-retained 0s "
                   "-o changelog.num-retained.max=100 -o changelog.num-retained.min=50",
                   p.b);
    ours = check_json_matches_cli(r, cli, SKIP_TIMES, "expire_changelogs");
    if (ours != NULL) {
        CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CHANGELOGS);
        CHECK_EQ_I64(paimon_cleanup_report_expired_count(r), jint(ours, "changelogs_expired"));
        CHECK(paimon_cleanup_report_has_expired_range(r));
        CHECK_EQ_I64(paimon_cleanup_report_first_expired_id(r), jint(ours, "first_expired"));
        CHECK_EQ_I64(paimon_cleanup_report_last_expired_id(r), jint(ours, "last_expired"));
        CHECK(!paimon_cleanup_report_has_earliest_after(r));
        CHECK(paimon_cleanup_report_files(r, PAIMON_CLEANUP_FILE_CLASS_CHANGELOG_META) > 0);
        check_deletion_accessors(r, ours);
    }
    printf("  %llu changelogs expired (%lld..%lld), %llu files; JSON and listing agree with the "
           "CLI\n",
           (unsigned long long)paimon_cleanup_report_expired_count(r),
           (long long)paimon_cleanup_report_first_expired_id(r),
           (long long)paimon_cleanup_report_last_expired_id(r),
           (unsigned long long)paimon_cleanup_report_total_files(r));
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);
    mj_free(ours);
    check_same_listing(&p, "expire_changelogs");

    /* Delete-all: the remaining changelogs are older than the earliest snapshot. */
    CHECK_OK(paimon_cleanup_expire_config_set_delete_all_changelogs(cfg, true, &err), err);
    CHECK_OK(paimon_cleanup_expire_changelogs(ctx, exec, cfg, NULL, &r, &err), err);
    cli = cli_json("expire-changelogs '%s' --delete-all "
                   "-o changelog.num-retained.max=100 -o changelog.num-retained.min=50",
                   p.b);
    mj_free(check_json_matches_cli(r, cli, SKIP_TIMES, "expire_changelogs delete-all"));
    CHECK(paimon_cleanup_report_expired_count(r) > 0);
    printf("  delete-all: %llu more changelogs expired, agrees with the CLI\n",
           (unsigned long long)paimon_cleanup_report_expired_count(r));
    paimon_cleanup_report_free(r);
    mj_free(cli);
    check_same_listing(&p, "expire_changelogs delete-all");

    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    pair_close(&p);
}

static void check_tags(void) {
    pair p;
    PaimonCleanupContext *ctx;
    PaimonCleanupExpireConfig *cfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    mj_value *cli = NULL, *ours = NULL;
    char *before, *after, *cmd;

    printf("delete_tag / expire_tags (orc/pk_09 with tags t1, t3)\n");
    if (!pair_open(&p, "orc/pk_09.db/pk_09")) return;
    both_shell(&p, "mkdir -p '%s/tag' && cp '%s/snapshot/snapshot-1' '%s/tag/tag-t1' && "
                   "cp '%s/snapshot/snapshot-3' '%s/tag/tag-t3'");
    ctx = context_with(p.a, NULL, 0);
    /* Expire the snapshots so that the tags alone keep some files. */
    CHECK_OK(paimon_cleanup_expire_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_min(cfg, 1, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_time_retained_ms(cfg, 0, &err), err);
    CHECK_OK(paimon_cleanup_expire_snapshots(ctx, exec, cfg, NULL, &r, &err), err);
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli_json("expire-snapshots '%s' --retain-min 1 --time-retained 0s", p.b));

    /* Dry run. */
    before = tu_list_tree(p.a, 1);
    CHECK_OK(paimon_cleanup_delete_tag(ctx, exec, "t1", true, NULL, &r, &err), err);
    after = tu_list_tree(p.a, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "the dry run changed the table");
    CHECK(paimon_cleanup_report_dry_run(r));
    CHECK(paimon_cleanup_report_files(r, PAIMON_CLEANUP_FILE_CLASS_TAG_META) == 1);
    free(before);
    free(after);
    paimon_cleanup_report_free(r);
    r = NULL;

    /* The real deletion. */
    CHECK_OK(paimon_cleanup_delete_tag(ctx, exec, "t1", false, NULL, &r, &err), err);
    cli = cli_json("delete-tag '%s' t1", p.b);
    ours = check_json_matches_cli(r, cli, SKIP_TIMES, "delete_tag");
    if (ours != NULL) {
        CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_DELETE_TAG);
        check_names(r, mj_get(ours, "tags_deleted"), paimon_cleanup_report_name_count,
                    paimon_cleanup_report_name);
        CHECK_EQ_I64(paimon_cleanup_report_expired_count(r), 1);
        CHECK_EQ_I64(paimon_cleanup_report_missing_count(r), 0);
        check_deletion_accessors(r, ours);
    }
    printf("  delete_tag t1: %llu files, JSON agrees with the CLI\n",
           (unsigned long long)paimon_cleanup_report_total_files(r));
    cmd = tu_format("%s/tag/tag-t1", p.a);
    CHECK(!tu_exists(cmd));
    free(cmd);
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);
    mj_free(ours);
    check_same_listing(&p, "delete_tag");

    /* A tag that does not exist: OK, nothing deleted, reported as missing. */
    CHECK_OK(paimon_cleanup_delete_tag(ctx, exec, "nope", false, NULL, &r, &err), err);
    CHECK_EQ_I64(paimon_cleanup_report_missing_count(r), 1);
    CHECK(strcmp(paimon_cleanup_report_missing(r, 0), "nope") == 0);
    CHECK(paimon_cleanup_report_missing(r, 1) == NULL);
    CHECK_EQ_I64(paimon_cleanup_report_name_count(r), 0);
    CHECK_EQ_I64(paimon_cleanup_report_total_files(r), 0);
    paimon_cleanup_report_free(r);
    r = NULL;
    CHECK_ERROR(paimon_cleanup_delete_tag(ctx, exec, "", false, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "tag name");
    CHECK_ERROR(paimon_cleanup_delete_tag(ctx, exec, NULL, false, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "tag");
    CHECK_ERROR(paimon_cleanup_delete_tag(ctx, exec, "\xff\xfe", false, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_UTF8, err, "tag");

    /* Tag expiry by age: t3's file is made 3 days old (the same on both copies). */
    both_shell(&p, "touch -d '3 days ago' '%s/tag/tag-t3'");
    {
        long long cut = tu_now_ms() - 86400000LL;
        char *args = tu_format("expire-tags '%%s' --older-than-ms %lld", cut);
        CHECK_OK(paimon_cleanup_expire_tags(ctx, exec, cut, false, NULL, &r, &err), err);
        cli = cli_json(args, p.b);
        free(args);
    }
    ours = check_json_matches_cli(r, cli, SKIP_TIMES, "expire_tags");
    if (ours != NULL) {
        CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_EXPIRE_TAGS);
        CHECK_EQ_I64(paimon_cleanup_report_name_count(r), 1);
        CHECK(paimon_cleanup_report_name(r, 0) != NULL &&
              strcmp(paimon_cleanup_report_name(r, 0), "t3") == 0);
        check_deletion_accessors(r, ours);
    }
    printf("  expire_tags (older than 1 day): t3 expired, %llu files, agrees with the CLI\n",
           (unsigned long long)paimon_cleanup_report_total_files(r));
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);
    mj_free(ours);
    check_same_listing(&p, "expire_tags");
    CHECK_ERROR(paimon_cleanup_expire_tags(ctx, exec, tu_now_ms() + 3600000LL, false, NULL, &r,
                                           &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "older_than_ms");
    CHECK_ERROR(paimon_cleanup_expire_tags(ctx, exec, -1, false, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "older_than_ms");

    paimon_cleanup_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    pair_close(&p);
}

static void check_consumers(void) {
    pair p;
    PaimonCleanupContext *ctx;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    mj_value *cli = NULL, *ours = NULL;

    printf("expire_consumers (orc/pk_09 with consumers old, new)\n");
    if (!pair_open(&p, "orc/pk_09.db/pk_09")) return;
    both_shell(&p, "mkdir -p '%s/consumer' && echo '{\"nextSnapshot\":8}' > "
                   "'%s/consumer/consumer-old' && echo '{\"nextSnapshot\":8}' > "
                   "'%s/consumer/consumer-new' && touch -d '2 days ago' '%s/consumer/consumer-old'");
    ctx = context_with(p.a, NULL, 0);
    CHECK_OK(paimon_cleanup_expire_consumers(ctx, exec, 86400000ULL, false, NULL, &r, &err), err);
    cli = cli_json("expire-consumers '%s' --expiration-time '1 d'", p.b);
    ours = check_json_matches_cli(r, cli, SKIP_TIMES, "expire_consumers");
    if (ours != NULL) {
        CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CONSUMERS);
        check_names(r, mj_get(ours, "expired"), paimon_cleanup_report_name_count,
                    paimon_cleanup_report_name);
        CHECK(paimon_cleanup_report_name_count(r) == 1 &&
              strcmp(paimon_cleanup_report_name(r, 0), "old") == 0);
        check_deletion_accessors(r, ours);
    }
    printf("  consumer \"old\" expired, \"new\" kept; agrees with the CLI\n");
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);
    mj_free(ours);
    check_same_listing(&p, "expire_consumers");
    /* No expiration given and none in the table options. */
    CHECK_ERROR(paimon_cleanup_expire_consumers(ctx, exec, 0, false, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "consumer.expiration-time");
    paimon_cleanup_context_free(ctx);
    pair_close(&p);
}

/* ---- orphans with a veto --------------------------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock;
    int calls;
    int saw_absolute; /* a path that is not relative to the table */
} veto_state;

static bool keep_marked(void *user_data, const char *path) {
    veto_state *v = (veto_state *)user_data;
    pthread_mutex_lock(&v->lock);
    v->calls++;
    if (path == NULL || path[0] == '/' || strstr(path, "://") != NULL) v->saw_absolute = 1;
    pthread_mutex_unlock(&v->lock);
    return path != NULL && strstr(path, "keep-me") != NULL;
}

static void check_orphans(void) {
    static const char *const SKIP_ORPHAN[] = {"elapsed_ms", "older_than_ms", NULL};
    pair p;
    PaimonCleanupContext *ctx;
    PaimonCleanupOrphanConfig *cfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    mj_value *cli = NULL, *ours = NULL;
    veto_state veto;
    char *before, *after, *path;

    printf("remove_orphan_files (orc/pk_09 + 2 orphans, every file 3 days old)\n");
    if (!pair_open(&p, "orc/pk_09.db/pk_09")) return;
    memset(&veto, 0, sizeof veto);
    pthread_mutex_init(&veto.lock, NULL);
    both_shell(&p, "echo x > '%s/f1=10/bucket-0/data-orphan-1.orc' && "
                   "echo x > '%s/manifest/manifest-orphan-keep-me' && "
                   "find '%s' -type f -exec touch -d '3 days ago' {} +");
    ctx = context_with(p.a, NULL, 0);
    CHECK_OK(paimon_cleanup_orphan_config_new(&cfg, &err), err);

    /* Dry run with the veto: nothing changes; only the unvetoed orphan is listed. */
    CHECK_OK(paimon_cleanup_orphan_config_set_veto(cfg, keep_marked, &veto, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, true, &err), err);
    before = tu_list_tree(p.a, 1);
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    after = tu_list_tree(p.a, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "the dry run changed the table");
    CHECK(paimon_cleanup_report_dry_run(r));
    CHECK_EQ_I64(paimon_cleanup_report_vetoed(r), 1);
    CHECK_EQ_I64(paimon_cleanup_report_path_count(r), 1);
    CHECK(paimon_cleanup_report_path(r, 0) != NULL &&
          strcmp(paimon_cleanup_report_path(r, 0), "f1=10/bucket-0/data-orphan-1.orc") == 0);
    CHECK_EQ_I64(veto.calls, 2);
    CHECK_EQ_I64(veto.saw_absolute, 0);
    free(before);
    free(after);
    paimon_cleanup_report_free(r);
    r = NULL;

    /* The real run with the veto, against the CLI without one. */
    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, false, &err), err);
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    cli = cli_json("remove-orphan-files '%s'", p.b);
    ours = mj_parse(paimon_cleanup_report_json(r));
    CHECK(ours != NULL);
    if (ours != NULL && cli != NULL) {
        CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_REMOVE_ORPHAN_FILES);
        CHECK_EQ_I64(paimon_cleanup_report_candidates(r), jint(cli, "candidates"));
        CHECK_EQ_I64(paimon_cleanup_report_referenced(r), jint(cli, "referenced"));
        CHECK_EQ_I64(paimon_cleanup_report_vetoed(r), 1);
        CHECK_EQ_I64(jint(cli, "vetoed"), 0);
        /* The CLI (no veto) also deleted the vetoed file. */
        CHECK_EQ_I64(paimon_cleanup_report_total_files(r) + 1, json_total_files(cli));
        CHECK(paimon_cleanup_report_cutoff_ms(r) > 0 &&
              paimon_cleanup_report_cutoff_ms(r) <= tu_now_ms() - 86400000LL + 60000);
        CHECK_EQ_I64(paimon_cleanup_report_cutoff_ms(r), jint(ours, "older_than_ms"));
        CHECK_EQ_I64(paimon_cleanup_report_warning_count(r), 0);
        check_deletion_accessors(r, ours);
    }
    path = tu_format("%s/manifest/manifest-orphan-keep-me", p.a);
    CHECK_MSG(tu_exists(path), "the vetoed orphan was deleted");
    free(path);
    path = tu_format("%s/f1=10/bucket-0/data-orphan-1.orc", p.a);
    CHECK_MSG(!tu_exists(path), "the orphan was not deleted");
    free(path);
    printf("  veto kept 1 file (asked %d times), %llu deleted; candidates/referenced agree with "
           "the CLI\n",
           veto.calls, (unsigned long long)paimon_cleanup_report_total_files(r));
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);
    mj_free(ours);

    /* Without the veto the C ABI run matches the CLI exactly (JSON and end state). The vetoed
     * file is put back on the CLI copy, plus a new orphan on both. */
    CHECK_OK(paimon_cleanup_orphan_config_set_veto(cfg, NULL, NULL, &err), err);
    both_shell(&p, "echo x > '%s/manifest/manifest-orphan-keep-me' && "
                   "echo y > '%s/f1=20/bucket-0/data-orphan-2.orc' && "
                   "find '%s' -type f -exec touch -d '3 days ago' {} +");
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    cli = cli_json("remove-orphan-files '%s'", p.b);
    mj_free(check_json_matches_cli(r, cli, SKIP_ORPHAN, "remove_orphan_files"));
    CHECK_EQ_I64(paimon_cleanup_report_total_files(r), 2);
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);
    check_same_listing(&p, "remove_orphan_files");

    /* Cut-off rules. */
    CHECK_OK(paimon_cleanup_orphan_config_set_older_than_ms(cfg, tu_now_ms() - 600000LL, &err),
             err);
    CHECK_ERROR(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "within the last hour");
    CHECK_OK(paimon_cleanup_orphan_config_set_no_writers_running(cfg, true, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_set_dry_run(cfg, true, &err), err);
    CHECK_OK(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err), err);
    paimon_cleanup_report_free(r);
    r = NULL;
    CHECK_OK(paimon_cleanup_orphan_config_set_older_than_ms(cfg, tu_now_ms() + 3600000LL, &err),
             err);
    CHECK_ERROR(paimon_cleanup_remove_orphan_files(ctx, exec, cfg, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "future");
    CHECK_ERROR(paimon_cleanup_orphan_config_set_older_than_ms(cfg, -1, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "older_than_ms");
    CHECK_ERROR(paimon_cleanup_orphan_config_set_list_concurrency(cfg, 100000, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "list_concurrency");
    CHECK_OK(paimon_cleanup_orphan_config_set_delete_concurrency(cfg, 4, &err), err);
    CHECK_ERROR(paimon_cleanup_remove_orphan_files(ctx, exec, NULL, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "config");
    printf("  cut-off within the last hour refused unless no writers run; future cut-off "
           "refused\n");

    pthread_mutex_destroy(&veto.lock);
    paimon_cleanup_orphan_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    pair_close(&p);
}

static void check_drop_partitions(void) {
    pair p;
    PaimonCleanupContext *ctx;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableSummary summary;
    mj_value *cli = NULL, *ours = NULL;
    const char *keys[] = {"f1"};
    const char *values[] = {"10"};
    const char *bad_keys[] = {"nokey"};
    PaimonCleanupPartitionSpec spec;
    PaimonCleanupPartitionSpec bad;

    printf("drop_partitions (parquet/pk_09, avro manifests, partition f1=10)\n");
    if (!pair_open(&p, "parquet/pk_09.db/pk_09")) return;
    ctx = context_with(p.a, NULL, 0);
    spec.keys = keys;
    spec.values = values;
    spec.field_count = 1;
    /* A preview commits nothing and names what the drop then marks. */
    CHECK_OK(paimon_cleanup_table_summary(ctx, exec, &summary, &err), err);
    {
        int64_t latest_before = summary.latest_snapshot_id;
        PaimonCleanupReport *preview = NULL;
        CHECK_OK(paimon_cleanup_preview_drop_partitions(ctx, exec, &spec, 1, NULL, &preview, &err),
                 err);
        CHECK(paimon_cleanup_report_dry_run(preview));
        CHECK_EQ_I64(paimon_cleanup_report_committed_snapshot_count(preview), 0);
        CHECK_EQ_I64(paimon_cleanup_report_expired_count(preview), 1);
        CHECK_OK(paimon_cleanup_table_summary(ctx, exec, &summary, &err), err);
        CHECK_EQ_I64(summary.latest_snapshot_id, latest_before);
        CHECK_OK(paimon_cleanup_drop_partitions(ctx, exec, &spec, 1, NULL, &r, &err), err);
        CHECK(!paimon_cleanup_report_dry_run(r));
        CHECK_EQ_I64(paimon_cleanup_report_files_marked_deleted(preview),
                     paimon_cleanup_report_files_marked_deleted(r));
        CHECK_EQ_I64(paimon_cleanup_report_rows_marked_deleted(preview),
                     paimon_cleanup_report_rows_marked_deleted(r));
        paimon_cleanup_report_free(preview);
    }
    cli = cli_json("drop-partitions '%s' --partition f1=10", p.b);
    ours = check_json_matches_cli(r, cli, SKIP_TIMES, "drop_partitions");
    if (ours != NULL) {
        CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_DROP_PARTITIONS);
        CHECK_EQ_I64(paimon_cleanup_report_expired_count(r), 1);
        CHECK(paimon_cleanup_report_name(r, 0) != NULL &&
              strcmp(paimon_cleanup_report_name(r, 0), "f1=10") == 0);
        CHECK_EQ_I64(paimon_cleanup_report_partition_field_count(r, 0), 1);
        CHECK(strcmp(paimon_cleanup_report_partition_key(r, 0, 0), "f1") == 0);
        CHECK(strcmp(paimon_cleanup_report_partition_value(r, 0, 0), "10") == 0);
        CHECK_EQ_I64(paimon_cleanup_report_files_marked_deleted(r),
                     jint(ours, "files_marked_deleted"));
        CHECK(paimon_cleanup_report_files_marked_deleted(r) > 0);
        CHECK_EQ_I64(paimon_cleanup_report_rows_marked_deleted(r),
                     jint(ours, "rows_marked_deleted"));
        CHECK_EQ_I64(paimon_cleanup_report_bytes_marked_deleted(r),
                     jint(ours, "bytes_marked_deleted"));
        CHECK_EQ_I64(paimon_cleanup_report_committed_snapshot_count(r), 1);
        CHECK_EQ_I64(paimon_cleanup_report_path_count(r), 0);
        CHECK_OK(paimon_cleanup_table_summary(ctx, exec, &summary, &err), err);
        CHECK_EQ_I64(summary.latest_snapshot_id, paimon_cleanup_report_committed_snapshot_id(r, 0));
    }
    printf("  dropped f1=10: %llu files marked deleted in snapshot %lld; agrees with the CLI\n",
           (unsigned long long)paimon_cleanup_report_files_marked_deleted(r),
           (long long)paimon_cleanup_report_committed_snapshot_id(r, 0));
    paimon_cleanup_report_free(r);
    r = NULL;
    mj_free(cli);
    mj_free(ours);

    /* Bad specs commit nothing. */
    bad.keys = bad_keys;
    bad.values = values;
    bad.field_count = 1;
    CHECK_ERROR(paimon_cleanup_drop_partitions(ctx, exec, &bad, 1, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "not a partition key");
    CHECK_ERROR(paimon_cleanup_drop_partitions(ctx, exec, &spec, 0, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "spec_count");
    bad.field_count = 0;
    CHECK_ERROR(paimon_cleanup_drop_partitions(ctx, exec, &bad, 1, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "empty");
    bad.field_count = 1;
    bad.keys = NULL;
    CHECK_ERROR(paimon_cleanup_drop_partitions(ctx, exec, &bad, 1, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_NULL_POINTER, err, "specs[0].keys");
    CHECK(r == NULL);
    check_same_tables(&p, "drop_partitions", 1);
    paimon_cleanup_context_free(ctx);
    pair_close(&p);

    /* A table whose manifests are ORC: the library writes Avro only and refuses. */
    {
        char *tmp = NULL;
        char *table = tu_copy_fixture_table(fixtures, "orc/pk_09.db/pk_09", &tmp);
        PaimonCleanupContext *orc = context_with(table, NULL, 0);
        CHECK_ERROR(paimon_cleanup_drop_partitions(orc, exec, &spec, 1, NULL, &r, &err),
                    PAIMON_CLEANUP_STATUS_UNSUPPORTED, err, "manifest.format");
        paimon_cleanup_context_free(orc);
        tu_remove_tree(tmp);
        free(tmp);
        free(table);
    }
}

static void check_expire_partitions(void) {
    pair p;
    PaimonCleanupContext *ctx;
    PaimonCleanupPartitionExpireConfig *cfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    mj_value *cli = NULL, *ours = NULL;
    char *before, *after;

    printf("expire_partitions (parquet/append_table_with_rt_branch, dt=yyyyMMdd)\n");
    if (!pair_open(&p, "parquet/append_table_with_rt_branch.db/append_table_with_rt_branch"))
        return;
    ctx = context_with(p.a, NULL, 0);
    /* No expiration time anywhere. */
    CHECK_ERROR(paimon_cleanup_expire_partitions(ctx, exec, NULL, NULL, &r, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "expiration");
    CHECK_OK(paimon_cleanup_partition_expire_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_expiration_time_ms(cfg, 86400000ULL, &err),
             err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_timestamp_formatter(cfg, "yyyyMMdd", &err),
             err);
    CHECK_OK(paimon_cleanup_partition_expire_config_set_strategy(
                 cfg, PAIMON_CLEANUP_PARTITION_EXPIRE_STRATEGY_VALUES_TIME, &err),
             err);
    CHECK_ERROR(paimon_cleanup_partition_expire_config_set_strategy(cfg, 7, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "strategy");
    CHECK_ERROR(paimon_cleanup_partition_expire_config_set_max_expires(cfg, 0, &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "max_expires");
    CHECK_ERROR(paimon_cleanup_partition_expire_config_set_now_ms(cfg, tu_now_ms() + 3600000LL,
                                                                  &err),
                PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, err, "now_ms");
    CHECK_OK(paimon_cleanup_partition_expire_config_set_max_expires(cfg, 100, &err), err);

    /* Dry run. */
    CHECK_OK(paimon_cleanup_partition_expire_config_set_dry_run(cfg, true, &err), err);
    before = tu_list_tree(p.a, 1);
    CHECK_OK(paimon_cleanup_expire_partitions(ctx, exec, cfg, NULL, &r, &err), err);
    after = tu_list_tree(p.a, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "the dry run changed the table");
    CHECK(paimon_cleanup_report_dry_run(r));
    CHECK(paimon_cleanup_report_expired_count(r) > 0);
    CHECK_EQ_I64(paimon_cleanup_report_committed_snapshot_count(r), 0);
    free(before);
    free(after);
    paimon_cleanup_report_free(r);
    r = NULL;

    /* The real run. */
    CHECK_OK(paimon_cleanup_partition_expire_config_set_dry_run(cfg, false, &err), err);
    CHECK_OK(paimon_cleanup_expire_partitions(ctx, exec, cfg, NULL, &r, &err), err);
    cli = cli_json("expire-partitions '%s' --expiration-time '1 d' --timestamp-formatter yyyyMMdd "
                   "--strategy values-time --max-num 100",
                   p.b);
    ours = check_json_matches_cli(r, cli, SKIP_TIMES, "expire_partitions");
    if (ours != NULL) {
        const mj_value *parts = mj_get(ours, "partitions");
        CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_EXPIRE_PARTITIONS);
        CHECK(parts != NULL && paimon_cleanup_report_name_count(r) == parts->count);
        CHECK(paimon_cleanup_report_name(r, 0) != NULL &&
              strncmp(paimon_cleanup_report_name(r, 0), "dt=", 3) == 0);
        CHECK_EQ_I64(paimon_cleanup_report_committed_snapshot_count(r), 1);
    }
    printf("  %llu partitions expired (first %s), agrees with the CLI\n",
           (unsigned long long)paimon_cleanup_report_expired_count(r),
           paimon_cleanup_report_name(r, 0) != NULL ? paimon_cleanup_report_name(r, 0) : "-");
    paimon_cleanup_report_free(r);
    mj_free(cli);
    mj_free(ours);
    check_same_tables(&p, "expire_partitions", 1);
    paimon_cleanup_partition_expire_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    pair_close(&p);
}

static void check_maintain(void) {
    static const char *const OPTIONS[] = {"snapshot.num-retained.min", "1",
                                          "snapshot.time-retained", "1 ms"};
    pair p;
    PaimonCleanupContext *ctx;
    PaimonCleanupMaintainConfig *cfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    mj_value *cli = NULL, *ours = NULL;
    const PaimonCleanupReport *snapshots = NULL;
    char *before, *after;
    size_t i;

    printf("maintain (orc/pk_09, snapshot.num-retained.min=1, snapshot.time-retained=1 ms)\n");
    if (!pair_open(&p, "orc/pk_09.db/pk_09")) return;
    ctx = context_with(p.a, OPTIONS, 2);
    CHECK_OK(paimon_cleanup_maintain_config_new(&cfg, &err), err);
    CHECK_OK(paimon_cleanup_maintain_config_set_dry_run(cfg, true, &err), err);
    before = tu_list_tree(p.a, 1);
    CHECK_OK(paimon_cleanup_maintain(ctx, exec, cfg, NULL, &r, &err), err);
    after = tu_list_tree(p.a, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "the dry run changed the table");
    CHECK(paimon_cleanup_report_dry_run(r));
    free(before);
    free(after);
    paimon_cleanup_report_free(r);
    r = NULL;

    /* NULL config: the defaults (a real run). */
    CHECK_OK(paimon_cleanup_maintain(ctx, exec, NULL, NULL, &r, &err), err);
    cli = cli_json("maintain '%s' -o snapshot.num-retained.min=1 -o 'snapshot.time-retained=1 ms'",
                   p.b);
    ours = check_json_matches_cli(r, cli, SKIP_TIMES, "maintain");
    CHECK_EQ_I64(paimon_cleanup_report_kind(r), PAIMON_CLEANUP_REPORT_KIND_MAINTAIN);
    CHECK_EQ_I64(paimon_cleanup_report_step_count(r), 2); /* tags, snapshots */
    CHECK(paimon_cleanup_report_step(r, 2) == NULL);
    for (i = 0; i < paimon_cleanup_report_step_count(r); i++) {
        const PaimonCleanupReport *step = paimon_cleanup_report_step(r, i);
        if (paimon_cleanup_report_kind(step) == PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS)
            snapshots = step;
    }
    CHECK(snapshots != NULL);
    if (snapshots != NULL && ours != NULL) {
        const mj_value *sj = mj_get(ours, "snapshots");
        CHECK(paimon_cleanup_report_expired_count(snapshots) > 0);
        CHECK_EQ_I64(paimon_cleanup_report_expired_count(snapshots), jint(sj, "snapshots_expired"));
        check_deletion_accessors(snapshots, sj);
        /* The parent sums its steps. */
        CHECK_EQ_I64(paimon_cleanup_report_total_files(r),
                     paimon_cleanup_report_total_files(snapshots) +
                         paimon_cleanup_report_total_files(paimon_cleanup_report_step(r, 0)));
        CHECK_EQ_I64(paimon_cleanup_report_path_count(r), paimon_cleanup_report_total_files(r));
    }
    printf("  %zu steps; snapshot step expired %llu snapshots; JSON and listing agree with the "
           "CLI\n",
           paimon_cleanup_report_step_count(r),
           (unsigned long long)paimon_cleanup_report_expired_count(snapshots));
    paimon_cleanup_report_free(r);
    mj_free(cli);
    mj_free(ours);
    check_same_listing(&p, "maintain");
    paimon_cleanup_maintain_config_free(cfg);
    paimon_cleanup_context_free(ctx);
    pair_close(&p);
}

/* Every operation with a token cancelled before the call: CANCELLED, nothing changed. */
static void check_cancel_before_every_operation(void) {
    char *tmp = NULL;
    char *table = tu_copy_fixture_table(fixtures, "parquet/pk_09.db/pk_09", &tmp);
    PaimonCleanupContext *ctx;
    PaimonCleanupRunOptions *opts = NULL;
    PaimonCleanupCancelToken *token = NULL;
    PaimonCleanupExpireConfig *ecfg = NULL;
    PaimonCleanupOrphanConfig *ocfg = NULL;
    PaimonCleanupReport *r = NULL;
    PaimonCleanupError *err = NULL;
    const char *keys[] = {"f1"}, *values[] = {"10"};
    PaimonCleanupPartitionSpec spec;
    char *before, *after;
    int statuses[9], i;

    printf("cancellation before the call, every operation\n");
    if (table == NULL) {
        tu_fail(__FILE__, __LINE__, "cannot copy");
        return;
    }
    spec.keys = keys;
    spec.values = values;
    spec.field_count = 1;
    ctx = context_with(table, NULL, 0);
    CHECK_OK(paimon_cleanup_run_options_new(&opts, &err), err);
    CHECK_OK(paimon_cleanup_cancel_token_new(&token, &err), err);
    CHECK_OK(paimon_cleanup_run_options_set_cancel_token(opts, token, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_new(&ecfg, &err), err);
    CHECK_OK(paimon_cleanup_expire_config_set_retain_min(ecfg, 1, &err), err);
    CHECK_OK(paimon_cleanup_orphan_config_new(&ocfg, &err), err);
    paimon_cleanup_cancel_token_cancel(token);
    before = tu_list_tree(table, 1);
    statuses[0] = paimon_cleanup_expire_snapshots(ctx, exec, ecfg, opts, &r, NULL);
    statuses[1] = paimon_cleanup_expire_changelogs(ctx, exec, ecfg, opts, &r, NULL);
    statuses[2] = paimon_cleanup_delete_tag(ctx, exec, "t", false, opts, &r, NULL);
    statuses[3] = paimon_cleanup_expire_tags(ctx, exec, 0, false, opts, &r, NULL);
    statuses[4] = paimon_cleanup_expire_consumers(ctx, exec, 1000, false, opts, &r, NULL);
    statuses[5] = paimon_cleanup_remove_orphan_files(ctx, exec, ocfg, opts, &r, NULL);
    statuses[6] = paimon_cleanup_drop_partitions(ctx, exec, &spec, 1, opts, &r, NULL);
    statuses[7] = paimon_cleanup_expire_partitions(ctx, exec, NULL, opts, &r, NULL);
    statuses[8] = paimon_cleanup_maintain(ctx, exec, NULL, opts, &r, &err);
    CHECK_ERROR(statuses[8], PAIMON_CLEANUP_STATUS_CANCELLED, err, "cancel");
    for (i = 0; i < 9; i++)
        CHECK_MSG(statuses[i] == PAIMON_CLEANUP_STATUS_CANCELLED, "operation %d returned %s", i,
                  paimon_cleanup_status_name(statuses[i]));
    CHECK(r == NULL);
    after = tu_list_tree(table, 1);
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "a cancelled operation changed the table");
    printf("  9 operations: CANCELLED, table unchanged\n");
    free(before);
    free(after);
    paimon_cleanup_orphan_config_free(ocfg);
    paimon_cleanup_expire_config_free(ecfg);
    paimon_cleanup_cancel_token_free(token);
    paimon_cleanup_run_options_free(opts);
    paimon_cleanup_context_free(ctx);
    tu_remove_tree(tmp);
    free(tmp);
    free(table);
}

int main(void) {
    PaimonCleanupError *err = NULL;
    fixtures = tu_fixtures_dir();
    if (fixtures == NULL) return tu_missing_fixtures("test_operations");
    CHECK_OK(paimon_cleanup_executor_new(2, &exec, &err), err);
    if (exec == NULL) return tu_finish("test_operations");
    check_changelogs();
    check_tags();
    check_consumers();
    check_orphans();
    check_drop_partitions();
    check_expire_partitions();
    check_maintain();
    check_cancel_before_every_operation();
    paimon_cleanup_executor_free(exec);
    return tu_finish("test_operations");
}
