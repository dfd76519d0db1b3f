/* A minimal JSON reader for the tests (to read `paimon-cleanup inspect --json`). */
#ifndef PAIMON_CLEANUP_MINI_JSON_H
#define PAIMON_CLEANUP_MINI_JSON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MJ_NULL, MJ_BOOL, MJ_NUMBER, MJ_STRING, MJ_ARRAY, MJ_OBJECT } mj_type;

typedef struct mj_value {
    mj_type type;
    int boolean;
    double number;
    long long integer; /* `number` truncated; exact for integers written without fraction */
    char *string;      /* MJ_STRING */
    size_t count;      /* MJ_ARRAY / MJ_OBJECT */
    struct mj_value *items;
    char **keys; /* MJ_OBJECT */
} mj_value;

/* Parses `text`; returns NULL on a syntax error. Free with mj_free. */
mj_value *mj_parse(const char *text);
void mj_free(mj_value *value);
/* Member `key` of an object, or NULL. */
const mj_value *mj_get(const mj_value *object, const char *key);

#ifdef __cplusplus
}
#endif

#endif
