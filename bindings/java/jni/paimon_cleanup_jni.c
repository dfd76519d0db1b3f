/*
 * JNI glue of the Java binding (org.apache.paimon.cleanup.PaimonCleanup's native methods) over
 * the C API in paimon_cleanup.h. Built by bindings/java/CMakeLists.txt into
 * libpaimon_cleanup_jni.so, which links the Rust library statically.
 *
 * Conventions
 *   - Handles cross as jlong (the native pointer). Java owns them and frees them through the
 *     matching *Free native; NULL handles are reported by the library as NULL_POINTER.
 *   - Strings cross as UTF-8 byte arrays (never JNI "modified UTF-8"), decoded in Java.
 *   - A failed call throws PaimonCleanupException (built by its static fromNative(int, byte[])).
 *   - Listener callbacks may arrive on the executor's native worker threads. Such a thread is
 *     attached to the JVM as a daemon thread the first time and detached when it exits (a
 *     pthread key destructor), so callbacks cost no attach per call and no thread stays
 *     attached after the executor is closed. Each callback runs in its own local frame.
 *   - A listener that throws: the exception is cleared on the callback thread, the run's token is
 *     cancelled, and the exception is rethrown on the calling Java thread when the run returns.
 */
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paimon_cleanup.h"

#define JNI_FN(name) Java_org_apache_paimon_cleanup_PaimonCleanup_##name
#define PTR(type, h) ((type *)(intptr_t)(h))
#define HANDLE(p) ((jlong)(intptr_t)(p))

static JavaVM *g_vm;
static jclass g_exception_class;   /* PaimonCleanupException */
static jmethodID g_exception_from; /* static fromNative(int, byte[]) */
static jclass g_binding_class;     /* PaimonCleanup */
static jmethodID g_decode;         /* static decode(byte[]) -> String */
static jmethodID g_on_progress;    /* ProgressListener.onProgress(String, long, long, long) */
static jmethodID g_keep;           /* VetoListener.keep(String) -> boolean */
static jmethodID g_on_log;         /* LogListener.onLog(int, String, String) */
static jclass g_bytes_class;       /* byte[] */
static pthread_key_t g_attached_key;

/* ---- threads ----------------------------------------------------------------------------- */

static void detach_on_exit(void *unused) {
    (void)unused;
    if (g_vm != NULL) (*g_vm)->DetachCurrentThread(g_vm);
}

/* The JNIEnv of the current thread, attaching it (as a daemon) when it is a native thread. */
static JNIEnv *current_env(void) {
    JNIEnv *env = NULL;
    jint rc = (*g_vm)->GetEnv(g_vm, (void **)&env, JNI_VERSION_1_6);
    if (rc == JNI_OK) return env;
    if (rc == JNI_EDETACHED) {
        JavaVMAttachArgs args;
        args.version = JNI_VERSION_1_6;
        args.name = (char *)"paimon-cleanup-worker";
        args.group = NULL;
        if ((*g_vm)->AttachCurrentThreadAsDaemon(g_vm, (void **)&env, &args) == JNI_OK) {
            pthread_setspecific(g_attached_key, (void *)1); /* detach when the thread exits */
            return env;
        }
    }
    return NULL;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    JNIEnv *env = NULL;
    jclass cls;
    (void)reserved;
    g_vm = vm;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
    if (pthread_key_create(&g_attached_key, detach_on_exit) != 0) return JNI_ERR;

    cls = (*env)->FindClass(env, "org/apache/paimon/cleanup/PaimonCleanupException");
    if (cls == NULL) return JNI_ERR;
    g_exception_class = (jclass)(*env)->NewGlobalRef(env, cls);
    g_exception_from = (*env)->GetStaticMethodID(
        env, cls, "fromNative", "(I[B)Lorg/apache/paimon/cleanup/PaimonCleanupException;");
    if (g_exception_from == NULL) return JNI_ERR;

    cls = (*env)->FindClass(env, "org/apache/paimon/cleanup/PaimonCleanup");
    if (cls == NULL) return JNI_ERR;
    g_binding_class = (jclass)(*env)->NewGlobalRef(env, cls);
    g_decode = (*env)->GetStaticMethodID(env, cls, "decode", "([B)Ljava/lang/String;");
    if (g_decode == NULL) return JNI_ERR;

    cls = (*env)->FindClass(env, "org/apache/paimon/cleanup/ProgressListener");
    if (cls == NULL) return JNI_ERR;
    g_on_progress = (*env)->GetMethodID(env, cls, "onProgress", "(Ljava/lang/String;JJJ)V");
    if (g_on_progress == NULL) return JNI_ERR;

    cls = (*env)->FindClass(env, "org/apache/paimon/cleanup/LogListener");
    if (cls == NULL) return JNI_ERR;
    g_on_log = (*env)->GetMethodID(env, cls, "onLog", "(ILjava/lang/String;Ljava/lang/String;)V");
    if (g_on_log == NULL) return JNI_ERR;

    cls = (*env)->FindClass(env, "org/apache/paimon/cleanup/VetoListener");
    if (cls == NULL) return JNI_ERR;
    g_keep = (*env)->GetMethodID(env, cls, "keep", "(Ljava/lang/String;)Z");
    if (g_keep == NULL) return JNI_ERR;

    cls = (*env)->FindClass(env, "[B");
    if (cls == NULL) return JNI_ERR;
    g_bytes_class = (jclass)(*env)->NewGlobalRef(env, cls);
    return JNI_VERSION_1_6;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM *vm, void *reserved) {
    JNIEnv *env = NULL;
    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) return;
    (*env)->DeleteGlobalRef(env, g_exception_class);
    (*env)->DeleteGlobalRef(env, g_binding_class);
    (*env)->DeleteGlobalRef(env, g_bytes_class);
}

/* ---- strings and errors ------------------------------------------------------------------- */

/* A Java byte[] holding the bytes of `s` (NULL for NULL). */
static jbyteArray to_bytes(JNIEnv *env, const char *s) {
    jsize n;
    jbyteArray out;
    if (s == NULL) return NULL;
    n = (jsize)strlen(s);
    out = (*env)->NewByteArray(env, n);
    if (out == NULL) return NULL; /* OutOfMemoryError pending */
    (*env)->SetByteArrayRegion(env, out, 0, n, (const jbyte *)s);
    return (*env)->ExceptionCheck(env) ? NULL : out;
}

/* A malloc'ed NUL-terminated copy of a Java byte[] (NULL for NULL or out of memory). */
static char *from_bytes(JNIEnv *env, jbyteArray b) {
    jsize n;
    char *out;
    if (b == NULL) return NULL;
    n = (*env)->GetArrayLength(env, b);
    out = malloc((size_t)n + 1);
    if (out == NULL) return NULL;
    (*env)->GetByteArrayRegion(env, b, 0, n, (jbyte *)out);
    out[n] = '\0';
    return out;
}

static void throw_status(JNIEnv *env, int status, const char *message) {
    jbyteArray msg;
    jobject ex;
    if ((*env)->ExceptionCheck(env)) return;
    msg = to_bytes(env, message != NULL ? message : "");
    if (msg == NULL) return; /* OutOfMemoryError pending */
    ex = (*env)->CallStaticObjectMethod(env, g_exception_class, g_exception_from, (jint)status, msg);
    if (!(*env)->ExceptionCheck(env) && ex != NULL) (*env)->Throw(env, (jthrowable)ex);
}

/* Throws for a failed call and frees its error (clearing *err); returns 1 when the call failed.
 * The error is passed by address so that it is read only after the call that set it returned
 * (C leaves the evaluation order of arguments unspecified). */
static int check(JNIEnv *env, PaimonCleanupStatus status, PaimonCleanupError **err) {
    PaimonCleanupError *e = *err;
    *err = NULL;
    if (status == PAIMON_CLEANUP_STATUS_OK) {
        paimon_cleanup_error_free(e);
        return 0;
    }
    throw_status(env, (int)status, paimon_cleanup_error_message(e));
    paimon_cleanup_error_free(e);
    return 1;
}

static void throw_oom(JNIEnv *env) { throw_status(env, PAIMON_CLEANUP_STATUS_INTERNAL, "out of memory"); }

/* ---- version, status ---------------------------------------------------------------------- */

JNIEXPORT jbyteArray JNICALL JNI_FN(version0)(JNIEnv *env, jclass cls) {
    (void)cls;
    return to_bytes(env, paimon_cleanup_version());
}

JNIEXPORT jint JNICALL JNI_FN(abiVersion0)(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return (jint)paimon_cleanup_abi_version();
}

JNIEXPORT jint JNICALL JNI_FN(glueAbiVersion0)(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return (jint)PAIMON_CLEANUP_ABI_VERSION;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(statusName0)(JNIEnv *env, jclass cls, jint status) {
    (void)cls;
    return to_bytes(env, paimon_cleanup_status_name(status));
}

/* ---- older_than text ---------------------------------------------------------------------- */

JNIEXPORT jlong JNICALL JNI_FN(parseOlderThan0)(JNIEnv *env, jclass cls, jbyteArray text,
                                                jlong now_ms) {
    PaimonCleanupError *err = NULL;
    int64_t ms = 0;
    char *ctext = from_bytes(env, text);
    (void)cls;
    if (text != NULL && ctext == NULL) {
        throw_oom(env);
        return 0;
    }
    if (check(env, paimon_cleanup_parse_older_than(ctext, (int64_t)now_ms, &ms, &err), &err)) ms = 0;
    free(ctext);
    return (jlong)ms;
}

/* ---- warehouse ---------------------------------------------------------------------------- */

/* The tables of a warehouse as 2n byte strings: name 0, location 0, name 1, ... */
JNIEXPORT jobjectArray JNICALL JNI_FN(listTables0)(JNIEnv *env, jclass cls, jbyteArray root,
                                                  jbyteArray pattern) {
    PaimonCleanupError *err = NULL;
    PaimonCleanupTableList *list = NULL;
    jobjectArray out = NULL;
    char *croot = from_bytes(env, root);
    char *cpattern = from_bytes(env, pattern);
    size_t n, i;
    (void)cls;
    if ((root != NULL && croot == NULL) || (pattern != NULL && cpattern == NULL)) {
        free(croot);
        free(cpattern);
        throw_oom(env);
        return NULL;
    }
    if (check(env, paimon_cleanup_warehouse_list_tables(croot, cpattern, &list, &err), &err)) {
        free(croot);
        free(cpattern);
        return NULL;
    }
    free(croot);
    free(cpattern);
    n = paimon_cleanup_table_list_count(list);
    if (n > (size_t)(INT32_MAX / 2)) {
        paimon_cleanup_table_list_free(list);
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "too many tables for a Java array");
        return NULL;
    }
    out = (*env)->NewObjectArray(env, (jsize)(2 * n), g_bytes_class, NULL);
    for (i = 0; out != NULL && i < 2 * n; i++) {
        const char *s = (i % 2 == 0) ? paimon_cleanup_table_list_name(list, i / 2)
                                     : paimon_cleanup_table_list_location(list, i / 2);
        jbyteArray b = to_bytes(env, s != NULL ? s : "");
        if (b == NULL) {
            out = NULL; /* OutOfMemoryError pending */
            break;
        }
        (*env)->SetObjectArrayElement(env, out, (jsize)i, b);
        (*env)->DeleteLocalRef(env, b);
    }
    paimon_cleanup_table_list_free(list);
    return out;
}

/* ---- executor ----------------------------------------------------------------------------- */

JNIEXPORT jlong JNICALL JNI_FN(executorNew)(JNIEnv *env, jclass cls, jint workers) {
    PaimonCleanupExecutor *exec = NULL;
    PaimonCleanupError *err = NULL;
    (void)cls;
    if (check(env, paimon_cleanup_executor_new((uint32_t)workers, &exec, &err), &err)) return 0;
    return HANDLE(exec);
}

JNIEXPORT void JNICALL JNI_FN(executorSetIoConcurrency)(JNIEnv *env, jclass cls, jlong h, jint n) {
    PaimonCleanupError *err = NULL;
    (void)cls;
    check(env,
          paimon_cleanup_executor_set_io_concurrency(PTR(PaimonCleanupExecutor, h), (uint32_t)n, &err),
          &err);
}

JNIEXPORT jint JNICALL JNI_FN(executorWorkerThreads)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    return (jint)paimon_cleanup_executor_worker_threads(PTR(PaimonCleanupExecutor, h));
}

JNIEXPORT jint JNICALL JNI_FN(executorIoConcurrency)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    return (jint)paimon_cleanup_executor_io_concurrency(PTR(PaimonCleanupExecutor, h));
}

JNIEXPORT void JNICALL JNI_FN(executorFree)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    paimon_cleanup_executor_free(PTR(PaimonCleanupExecutor, h));
}

/* ---- context and summary ------------------------------------------------------------------ */

/* A malloc'ed array of `n` malloc'ed strings from a byte[][] (elements may be NULL), or NULL
 * when out of memory. */
static void free_strings(char **s, jsize n);
static char **strings_from(JNIEnv *env, jobjectArray array, jsize n) {
    jsize i;
    char **out = calloc(n > 0 ? (size_t)n : 1, sizeof *out);
    if (out == NULL) return NULL;
    for (i = 0; i < n; i++) {
        jbyteArray b = (jbyteArray)(*env)->GetObjectArrayElement(env, array, i);
        if (b == NULL) continue;
        out[i] = from_bytes(env, b);
        (*env)->DeleteLocalRef(env, b);
        if (out[i] == NULL) {
            free_strings(out, n);
            return NULL;
        }
    }
    return out;
}

static void free_strings(char **s, jsize n) {
    jsize i;
    if (s == NULL) return;
    for (i = 0; i < n; i++) free(s[i]);
    free(s);
}

JNIEXPORT jlong JNICALL JNI_FN(contextNew)(JNIEnv *env, jclass cls, jbyteArray uri,
                                           jobjectArray keys, jobjectArray values) {
    PaimonCleanupContext *ctx = NULL;
    PaimonCleanupError *err = NULL;
    jsize n = keys != NULL ? (*env)->GetArrayLength(env, keys) : 0;
    char *curi = from_bytes(env, uri);
    char **ck = strings_from(env, keys, n), **cv = strings_from(env, values, n);
    PaimonCleanupStatus status;
    (void)cls;
    if (ck == NULL || cv == NULL || (uri != NULL && curi == NULL)) {
        throw_oom(env);
    } else {
        status = paimon_cleanup_context_new(curi, (const char *const *)ck, (const char *const *)cv,
                                            (size_t)n, &ctx, &err);
        if (check(env, status, &err)) ctx = NULL;
    }
    free(curi);
    free_strings(ck, n);
    free_strings(cv, n);
    return HANDLE(ctx);
}

JNIEXPORT void JNICALL JNI_FN(contextFree)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    paimon_cleanup_context_free(PTR(PaimonCleanupContext, h));
}

JNIEXPORT jlongArray JNICALL JNI_FN(tableSummary)(JNIEnv *env, jclass cls, jlong ctx, jlong exec) {
    PaimonCleanupTableSummary s;
    PaimonCleanupError *err = NULL;
    jlong v[8];
    jlongArray out;
    (void)cls;
    if (check(env,
              paimon_cleanup_table_summary(PTR(PaimonCleanupContext, ctx),
                                           PTR(PaimonCleanupExecutor, exec), &s, &err),
              &err))
        return NULL;
    v[0] = s.has_snapshots ? 1 : 0;
    v[1] = (jlong)s.earliest_snapshot_id;
    v[2] = (jlong)s.latest_snapshot_id;
    v[3] = (jlong)s.snapshot_count;
    v[4] = (jlong)s.tag_count;
    v[5] = (jlong)s.branch_count;
    v[6] = (jlong)s.live_file_count;
    v[7] = (jlong)s.live_file_bytes;
    out = (*env)->NewLongArray(env, 8);
    if (out != NULL) (*env)->SetLongArrayRegion(env, out, 0, 8, v);
    return out;
}

/* ---- per-call run handles ----------------------------------------------------------------- */

/* What Java holds for one operation call: its native cancellation token (cancelled through the
 * caller's CancelToken), the memory bound of RunOptions (0: none) and its log listener (a global
 * ref, or NULL) with the least severe level passed to it. Made by runNew, freed by runFree once
 * the call returned. */
typedef struct {
    PaimonCleanupCancelToken *token;
    uint64_t max_memory;
    jobject log;
    int32_t log_level;
} jni_run;

JNIEXPORT jlong JNICALL JNI_FN(runNew)(JNIEnv *env, jclass cls, jlong max_memory, jobject log,
                                       jint log_level) {
    jni_run *run;
    PaimonCleanupError *err = NULL;
    (void)cls;
    run = calloc(1, sizeof *run);
    if (run == NULL) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INTERNAL, "out of memory");
        return 0;
    }
    run->max_memory = max_memory > 0 ? (uint64_t)max_memory : 0;
    run->log_level = (int32_t)log_level;
    if (check(env, paimon_cleanup_cancel_token_new(&run->token, &err), &err)) {
        free(run);
        return 0;
    }
    if (log != NULL) run->log = (*env)->NewGlobalRef(env, log);
    return HANDLE(run);
}

JNIEXPORT void JNICALL JNI_FN(runCancel)(JNIEnv *env, jclass cls, jlong h) {
    jni_run *run = PTR(jni_run, h);
    (void)env;
    (void)cls;
    if (run != NULL) paimon_cleanup_cancel_token_cancel(run->token);
}

JNIEXPORT void JNICALL JNI_FN(runFree)(JNIEnv *env, jclass cls, jlong h) {
    jni_run *run = PTR(jni_run, h);
    (void)cls;
    if (run == NULL) return;
    if (run->log != NULL) (*env)->DeleteGlobalRef(env, run->log);
    paimon_cleanup_cancel_token_free(run->token);
    free(run);
}

/* ---- configurations (field numbers shared with TableContext.java) -------------------------- */

JNIEXPORT jlong JNICALL JNI_FN(expireConfigNew)(JNIEnv *env, jclass cls) {
    PaimonCleanupExpireConfig *c = NULL;
    PaimonCleanupError *err = NULL;
    (void)cls;
    if (check(env, paimon_cleanup_expire_config_new(&c, &err), &err)) return 0;
    return HANDLE(c);
}

JNIEXPORT void JNICALL JNI_FN(expireConfigSet)(JNIEnv *env, jclass cls, jlong h, jint field,
                                               jlong v) {
    PaimonCleanupExpireConfig *c = PTR(PaimonCleanupExpireConfig, h);
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s;
    (void)cls;
    switch (field) {
        case 0: s = paimon_cleanup_expire_config_set_retain_min(c, v, &err); break;
        case 1: s = paimon_cleanup_expire_config_set_retain_max(c, v, &err); break;
        case 2:
            if (v < 0) {
                throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT,
                             "timeRetainedMs must not be negative");
                return;
            }
            s = paimon_cleanup_expire_config_set_time_retained_ms(c, (uint64_t)v, &err);
            break;
        case 3: s = paimon_cleanup_expire_config_set_older_than_ms(c, v, &err); break;
        case 4: s = paimon_cleanup_expire_config_set_max_expires(c, v, &err); break;
        case 5: s = paimon_cleanup_expire_config_set_clean_empty_dirs(c, v != 0, &err); break;
        case 6: s = paimon_cleanup_expire_config_set_dry_run(c, v != 0, &err); break;
        case 7: s = paimon_cleanup_expire_config_set_refuse_if_tags_pin(c, v != 0, &err); break;
        case 8: s = paimon_cleanup_expire_config_set_delete_all_changelogs(c, v != 0, &err); break;
        default: throw_status(env, PAIMON_CLEANUP_STATUS_INTERNAL, "unknown expire config field"); return;
    }
    check(env, s, &err);
}

JNIEXPORT void JNICALL JNI_FN(expireConfigFree)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    paimon_cleanup_expire_config_free(PTR(PaimonCleanupExpireConfig, h));
}

JNIEXPORT jlong JNICALL JNI_FN(orphanConfigNew)(JNIEnv *env, jclass cls) {
    PaimonCleanupOrphanConfig *c = NULL;
    PaimonCleanupError *err = NULL;
    (void)cls;
    if (check(env, paimon_cleanup_orphan_config_new(&c, &err), &err)) return 0;
    return HANDLE(c);
}

JNIEXPORT void JNICALL JNI_FN(orphanConfigSet)(JNIEnv *env, jclass cls, jlong h, jint field,
                                               jlong v) {
    PaimonCleanupOrphanConfig *c = PTR(PaimonCleanupOrphanConfig, h);
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s;
    (void)cls;
    if ((field == 3 || field == 4) && (v < 0 || v > UINT32_MAX)) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "concurrency out of range");
        return;
    }
    switch (field) {
        case 0: s = paimon_cleanup_orphan_config_set_older_than_ms(c, v, &err); break;
        case 1: s = paimon_cleanup_orphan_config_set_dry_run(c, v != 0, &err); break;
        case 2: s = paimon_cleanup_orphan_config_set_no_writers_running(c, v != 0, &err); break;
        case 3: s = paimon_cleanup_orphan_config_set_list_concurrency(c, (uint32_t)v, &err); break;
        case 4: s = paimon_cleanup_orphan_config_set_delete_concurrency(c, (uint32_t)v, &err); break;
        case 5: s = paimon_cleanup_orphan_config_set_external_roots_owned(c, v != 0, &err); break;
        default: throw_status(env, PAIMON_CLEANUP_STATUS_INTERNAL, "unknown orphan config field"); return;
    }
    check(env, s, &err);
}

JNIEXPORT void JNICALL JNI_FN(orphanConfigFree)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    paimon_cleanup_orphan_config_free(PTR(PaimonCleanupOrphanConfig, h));
}

JNIEXPORT jlong JNICALL JNI_FN(partitionExpireConfigNew)(JNIEnv *env, jclass cls) {
    PaimonCleanupPartitionExpireConfig *c = NULL;
    PaimonCleanupError *err = NULL;
    (void)cls;
    if (check(env, paimon_cleanup_partition_expire_config_new(&c, &err), &err)) return 0;
    return HANDLE(c);
}

JNIEXPORT void JNICALL JNI_FN(partitionExpireConfigSet)(JNIEnv *env, jclass cls, jlong h,
                                                        jint field, jlong v) {
    PaimonCleanupPartitionExpireConfig *c = PTR(PaimonCleanupPartitionExpireConfig, h);
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s;
    (void)cls;
    if ((field == 0 || field == 2 || field == 3) && v < 0) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "value must not be negative");
        return;
    }
    switch (field) {
        case 0:
            s = paimon_cleanup_partition_expire_config_set_expiration_time_ms(c, (uint64_t)v, &err);
            break;
        case 1: s = paimon_cleanup_partition_expire_config_set_strategy(c, (int32_t)v, &err); break;
        case 2: s = paimon_cleanup_partition_expire_config_set_max_expires(c, (uint64_t)v, &err); break;
        case 3: s = paimon_cleanup_partition_expire_config_set_batch_size(c, (uint64_t)v, &err); break;
        case 4: s = paimon_cleanup_partition_expire_config_set_dry_run(c, v != 0, &err); break;
        case 5: s = paimon_cleanup_partition_expire_config_set_now_ms(c, v, &err); break;
        default:
            throw_status(env, PAIMON_CLEANUP_STATUS_INTERNAL, "unknown partition expire config field");
            return;
    }
    check(env, s, &err);
}

JNIEXPORT void JNICALL JNI_FN(partitionExpireConfigSetString)(JNIEnv *env, jclass cls, jlong h,
                                                              jint field, jbyteArray value) {
    PaimonCleanupPartitionExpireConfig *c = PTR(PaimonCleanupPartitionExpireConfig, h);
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s;
    char *v = from_bytes(env, value);
    (void)cls;
    if (value != NULL && v == NULL) {
        throw_oom(env);
        return;
    }
    if (field == 0)
        s = paimon_cleanup_partition_expire_config_set_timestamp_formatter(c, v, &err);
    else
        s = paimon_cleanup_partition_expire_config_set_timestamp_pattern(c, v, &err);
    free(v);
    check(env, s, &err);
}

JNIEXPORT void JNICALL JNI_FN(partitionExpireConfigFree)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    paimon_cleanup_partition_expire_config_free(PTR(PaimonCleanupPartitionExpireConfig, h));
}

/* ---- one operation call: run options, listeners, exceptions ------------------------------- */

typedef struct {
    jobject progress; /* global ref or NULL */
    jobject veto;     /* global ref or NULL */
    jobject log;      /* the run handle's global ref (not owned) or NULL */
    const PaimonCleanupCancelToken *token;
    PaimonCleanupRunOptions *options;
    pthread_mutex_t lock;
    jthrowable pending; /* global ref: the first exception a listener threw */
} call_state;

/* Clears the callback thread's pending exception, keeps the first one and cancels the run. */
static void record_exception(JNIEnv *env, call_state *st) {
    jthrowable t = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    pthread_mutex_lock(&st->lock);
    if (st->pending == NULL && t != NULL) {
        st->pending = (jthrowable)(*env)->NewGlobalRef(env, t);
        paimon_cleanup_cancel_token_cancel(st->token);
    }
    pthread_mutex_unlock(&st->lock);
}

static int stopping(call_state *st) {
    int r;
    pthread_mutex_lock(&st->lock);
    r = st->pending != NULL;
    pthread_mutex_unlock(&st->lock);
    return r;
}

static jstring decode(JNIEnv *env, const char *s) {
    jbyteArray b = to_bytes(env, s != NULL ? s : "");
    jstring out;
    if (b == NULL) return NULL;
    out = (jstring)(*env)->CallStaticObjectMethod(env, g_binding_class, g_decode, b);
    if ((*env)->ExceptionCheck(env)) return NULL;
    return out;
}

static void progress_trampoline(void *user_data, const char *phase, uint64_t done, uint64_t total,
                                uint64_t bytes) {
    call_state *st = user_data;
    JNIEnv *env = current_env();
    jstring jphase;
    if (env == NULL || stopping(st)) return;
    if ((*env)->PushLocalFrame(env, 8) != 0) {
        record_exception(env, st);
        return;
    }
    jphase = decode(env, phase);
    if (jphase != NULL)
        (*env)->CallVoidMethod(env, st->progress, g_on_progress, jphase, (jlong)done, (jlong)total,
                               (jlong)bytes);
    if ((*env)->ExceptionCheck(env)) record_exception(env, st);
    (*env)->PopLocalFrame(env, NULL);
}

static void log_trampoline(void *user_data, int32_t level, const char *target,
                           const char *message) {
    call_state *st = user_data;
    JNIEnv *env = current_env();
    jstring jtarget, jmessage;
    if (env == NULL || stopping(st)) return;
    if ((*env)->PushLocalFrame(env, 8) != 0) {
        record_exception(env, st);
        return;
    }
    jtarget = decode(env, target);
    jmessage = jtarget != NULL ? decode(env, message) : NULL;
    if (jmessage != NULL)
        (*env)->CallVoidMethod(env, st->log, g_on_log, (jint)level, jtarget, jmessage);
    if ((*env)->ExceptionCheck(env)) record_exception(env, st);
    (*env)->PopLocalFrame(env, NULL);
}

static bool veto_trampoline(void *user_data, const char *path) {
    call_state *st = user_data;
    JNIEnv *env = current_env();
    jstring jpath;
    jboolean keep = JNI_TRUE; /* keep the file unless the listener says otherwise */
    if (env == NULL || stopping(st)) return true;
    if ((*env)->PushLocalFrame(env, 8) != 0) {
        record_exception(env, st);
        return true;
    }
    jpath = decode(env, path);
    if (jpath != NULL) keep = (*env)->CallBooleanMethod(env, st->veto, g_keep, jpath);
    if ((*env)->ExceptionCheck(env)) {
        record_exception(env, st);
        keep = JNI_TRUE;
    }
    (*env)->PopLocalFrame(env, NULL);
    return keep != JNI_FALSE;
}

/* Prepares a call: run options with the Java-side run handle's token and memory bound and, when
 * given, the progress listener. Returns 0 on success; on failure an exception is pending. */
static int call_begin(JNIEnv *env, call_state *st, jlong run, jobject progress, jobject veto) {
    PaimonCleanupError *err = NULL;
    const jni_run *r = PTR(const jni_run, run);
    memset(st, 0, sizeof *st);
    pthread_mutex_init(&st->lock, NULL);
    st->token = r != NULL ? r->token : NULL;
    if (progress != NULL) st->progress = (*env)->NewGlobalRef(env, progress);
    if (veto != NULL) st->veto = (*env)->NewGlobalRef(env, veto);
    if (check(env, paimon_cleanup_run_options_new(&st->options, &err), &err)) return 1;
    err = NULL;
    if (check(env, paimon_cleanup_run_options_set_cancel_token(st->options, st->token, &err), &err))
        return 1;
    err = NULL;
    if (r != NULL && r->max_memory != 0 &&
        check(env, paimon_cleanup_run_options_set_max_memory(st->options, r->max_memory, &err),
              &err))
        return 1;
    err = NULL;
    st->log = r != NULL ? r->log : NULL;
    if (st->log != NULL &&
        check(env,
              paimon_cleanup_run_options_set_log(st->options, log_trampoline, r->log_level, st,
                                                 &err),
              &err))
        return 1;
    err = NULL;
    if (st->progress != NULL &&
        check(env,
              paimon_cleanup_run_options_set_progress(st->options, progress_trampoline, st, &err),
              &err))
        return 1;
    return 0;
}

/* Finishes a call: frees the run options and global refs; rethrows a listener's exception or
 * throws the call's error. Returns the report handle, or 0 when an exception is pending (the
 * report, if any, is then freed). */
static jlong call_end(JNIEnv *env, call_state *st, PaimonCleanupStatus status,
                      PaimonCleanupReport *report, PaimonCleanupError *err) {
    jlong out = 0;
    paimon_cleanup_run_options_free(st->options);
    if (st->progress != NULL) (*env)->DeleteGlobalRef(env, st->progress);
    if (st->veto != NULL) (*env)->DeleteGlobalRef(env, st->veto);
    if (st->pending != NULL) {
        (*env)->Throw(env, st->pending);
        (*env)->DeleteGlobalRef(env, st->pending);
        paimon_cleanup_error_free(err);
        paimon_cleanup_report_free(report);
    } else if (check(env, status, &err)) {
        paimon_cleanup_report_free(report);
    } else {
        out = HANDLE(report);
    }
    pthread_mutex_destroy(&st->lock);
    return out;
}

#define CTX(h) PTR(const PaimonCleanupContext, h)
#define EXEC(h) PTR(const PaimonCleanupExecutor, h)

JNIEXPORT jlong JNICALL JNI_FN(expire)(JNIEnv *env, jclass cls, jlong ctx, jlong exec, jlong cfg,
                                       jboolean changelogs, jlong token, jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0) {
        s = changelogs
                ? paimon_cleanup_expire_changelogs(CTX(ctx), EXEC(exec),
                                                   PTR(PaimonCleanupExpireConfig, cfg), st.options,
                                                   &report, &err)
                : paimon_cleanup_expire_snapshots(CTX(ctx), EXEC(exec),
                                                  PTR(PaimonCleanupExpireConfig, cfg), st.options,
                                                  &report, &err);
    }
    return call_end(env, &st, s, report, err);
}

JNIEXPORT jlong JNICALL JNI_FN(deleteTag)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                          jbyteArray tag, jboolean dry_run, jlong token,
                                          jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    char *ctag = from_bytes(env, tag);
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0)
        s = paimon_cleanup_delete_tag(CTX(ctx), EXEC(exec), ctag, dry_run != JNI_FALSE, st.options,
                                      &report, &err);
    free(ctag);
    return call_end(env, &st, s, report, err);
}

JNIEXPORT jlong JNICALL JNI_FN(expireTags)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                           jlong older_than_ms, jboolean dry_run, jlong token,
                                           jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0)
        s = paimon_cleanup_expire_tags(CTX(ctx), EXEC(exec), older_than_ms, dry_run != JNI_FALSE,
                                       st.options, &report, &err);
    return call_end(env, &st, s, report, err);
}

JNIEXPORT jlong JNICALL JNI_FN(expireConsumers)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                                jlong expiration_ms, jboolean dry_run, jlong token,
                                                jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0)
        s = paimon_cleanup_expire_consumers(CTX(ctx), EXEC(exec), (uint64_t)expiration_ms,
                                            dry_run != JNI_FALSE, st.options, &report, &err);
    return call_end(env, &st, s, report, err);
}

JNIEXPORT jlong JNICALL JNI_FN(maintain)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                         jboolean dry_run, jlong token, jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupMaintainConfig *cfg = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0) {
        s = paimon_cleanup_maintain_config_new(&cfg, &err);
        if (s == PAIMON_CLEANUP_STATUS_OK)
            s = paimon_cleanup_maintain_config_set_dry_run(cfg, dry_run != JNI_FALSE, &err);
        if (s == PAIMON_CLEANUP_STATUS_OK)
            s = paimon_cleanup_maintain(CTX(ctx), EXEC(exec), cfg, st.options, &report, &err);
        paimon_cleanup_maintain_config_free(cfg);
    }
    return call_end(env, &st, s, report, err);
}

JNIEXPORT jlong JNICALL JNI_FN(removeOrphanFiles)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                                  jlong cfg, jobject veto, jlong token,
                                                  jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupOrphanConfig *config = PTR(PaimonCleanupOrphanConfig, cfg);
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    (void)cls;
    if (call_begin(env, &st, token, progress, veto) == 0) {
        /* The config is this call's own (TableContext creates one per call). */
        s = paimon_cleanup_orphan_config_set_veto(config, st.veto != NULL ? veto_trampoline : NULL,
                                                  &st, &err);
        if (s == PAIMON_CLEANUP_STATUS_OK)
            s = paimon_cleanup_remove_orphan_files(CTX(ctx), EXEC(exec), config, st.options,
                                                   &report, &err);
        if (st.veto != NULL) paimon_cleanup_orphan_config_set_veto(config, NULL, NULL, NULL);
    }
    return call_end(env, &st, s, report, err);
}

JNIEXPORT jlong JNICALL JNI_FN(dropPartitions)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                               jobjectArray keys, jobjectArray values,
                                               jboolean preview, jlong token, jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    jsize n = keys != NULL ? (*env)->GetArrayLength(env, keys) : 0, i;
    PaimonCleanupPartitionSpec *specs = calloc(n > 0 ? (size_t)n : 1, sizeof *specs);
    char ***ck = calloc(n > 0 ? (size_t)n : 1, sizeof *ck);
    char ***cv = calloc(n > 0 ? (size_t)n : 1, sizeof *cv);
    jsize *counts = calloc(n > 0 ? (size_t)n : 1, sizeof *counts);
    int oom = specs == NULL || ck == NULL || cv == NULL || counts == NULL;
    (void)cls;
    for (i = 0; !oom && i < n; i++) {
        jobjectArray k = (jobjectArray)(*env)->GetObjectArrayElement(env, keys, i);
        jobjectArray v = (jobjectArray)(*env)->GetObjectArrayElement(env, values, i);
        counts[i] = k != NULL ? (*env)->GetArrayLength(env, k) : 0;
        ck[i] = strings_from(env, k, counts[i]);
        cv[i] = strings_from(env, v, counts[i]);
        oom = ck[i] == NULL || cv[i] == NULL;
        if (!oom) {
            specs[i].keys = (const char *const *)ck[i];
            specs[i].values = (const char *const *)cv[i];
            specs[i].field_count = (size_t)counts[i];
        }
        (*env)->DeleteLocalRef(env, k);
        (*env)->DeleteLocalRef(env, v);
    }
    if (oom) {
        throw_oom(env);
    } else if (call_begin(env, &st, token, progress, NULL) == 0) {
        s = preview ? paimon_cleanup_preview_drop_partitions(CTX(ctx), EXEC(exec), specs,
                                                             (size_t)n, st.options, &report, &err)
                    : paimon_cleanup_drop_partitions(CTX(ctx), EXEC(exec), specs, (size_t)n,
                                                     st.options, &report, &err);
    }
    for (i = 0; ck != NULL && cv != NULL && counts != NULL && i < n; i++) {
        free_strings(ck[i], counts[i]);
        free_strings(cv[i], counts[i]);
    }
    free(ck);
    free(cv);
    free(counts);
    free(specs);
    if (oom) return 0;
    return call_end(env, &st, s, report, err);
}

JNIEXPORT jlong JNICALL JNI_FN(expirePartitions)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                                 jlong cfg, jlong token, jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0)
        s = paimon_cleanup_expire_partitions(CTX(ctx), EXEC(exec),
                                             PTR(PaimonCleanupPartitionExpireConfig, cfg),
                                             st.options, &report, &err);
    return call_end(env, &st, s, report, err);
}

/* ---- orphan removal as units (OrphanUnits.java) ------------------------------------------- */

/* A Java byte[] copy of a library buffer (NULL, with an exception pending, on failure). */
static jbyteArray buffer_bytes(JNIEnv *env, const PaimonCleanupBuffer *b) {
    size_t n = paimon_cleanup_buffer_len(b);
    jbyteArray out;
    if (n > (size_t)INT32_MAX) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT,
                     "a unit or partial result is larger than a Java array");
        return NULL;
    }
    out = (*env)->NewByteArray(env, (jsize)n);
    if (out == NULL) return NULL;
    if (n > 0)
        (*env)->SetByteArrayRegion(env, out, 0, (jsize)n,
                                   (const jbyte *)paimon_cleanup_buffer_data(b));
    return (*env)->ExceptionCheck(env) ? NULL : out;
}

/* byte[][] { first, list[0], list[1], ... } (NULL, with an exception pending, on failure). */
/* { first, slots 1 to at - 1 left NULL, the list's buffers from slot `at` on }. */
static jobjectArray buffers_array_at(JNIEnv *env, const PaimonCleanupBuffer *first,
                                     const PaimonCleanupBufferList *list, size_t at) {
    size_t n = paimon_cleanup_buffer_list_count(list), i;
    jobjectArray out;
    jbyteArray b;
    if (n >= (size_t)INT32_MAX - at) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "too many units for a Java array");
        return NULL;
    }
    out = (*env)->NewObjectArray(env, (jsize)(n + at), g_bytes_class, NULL);
    if (out == NULL) return NULL;
    b = buffer_bytes(env, first);
    if (b == NULL) return NULL;
    (*env)->SetObjectArrayElement(env, out, 0, b);
    (*env)->DeleteLocalRef(env, b);
    for (i = 0; i < n; i++) {
        b = buffer_bytes(env, paimon_cleanup_buffer_list_get(list, i));
        if (b == NULL) return NULL;
        (*env)->SetObjectArrayElement(env, out, (jsize)(i + at), b);
        (*env)->DeleteLocalRef(env, b);
        if ((*env)->ExceptionCheck(env)) return NULL;
    }
    return out;
}

static jobjectArray buffers_array(JNIEnv *env, const PaimonCleanupBuffer *first,
                                  const PaimonCleanupBufferList *list) {
    return buffers_array_at(env, first, list, 1);
}

/* The paths of `list` as one Java byte[]: each path's UTF-8 followed by a NUL byte. */
static jbyteArray joined_bytes(JNIEnv *env, const PaimonCleanupBufferList *list) {
    static const jbyte nul = 0;
    size_t n = paimon_cleanup_buffer_list_count(list), i, total = 0, at = 0, len;
    const PaimonCleanupBuffer *b;
    jbyteArray out;
    for (i = 0; i < n; i++) {
        total += paimon_cleanup_buffer_len(paimon_cleanup_buffer_list_get(list, i)) + 1;
        if (total > (size_t)INT32_MAX) {
            throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT,
                         "the paths are larger than a Java array");
            return NULL;
        }
    }
    out = (*env)->NewByteArray(env, (jsize)total);
    if (out == NULL) return NULL;
    for (i = 0; i < n; i++) {
        b = paimon_cleanup_buffer_list_get(list, i);
        len = paimon_cleanup_buffer_len(b);
        if (len > 0)
            (*env)->SetByteArrayRegion(env, out, (jsize)at, (jsize)len,
                                       (const jbyte *)paimon_cleanup_buffer_data(b));
        at += len;
        (*env)->SetByteArrayRegion(env, out, (jsize)at, 1, &nul);
        at += 1;
        if ((*env)->ExceptionCheck(env)) return NULL;
    }
    return out;
}

/* A malloc'ed copy of a Java byte[] into *data / *len (NULL for an empty array). Returns 0 on
 * success; on failure an exception is pending. */
static int bytes_in(JNIEnv *env, jbyteArray a, uint8_t **data, size_t *len) {
    jsize n = a != NULL ? (*env)->GetArrayLength(env, a) : 0;
    *data = NULL;
    *len = (size_t)n;
    if (n == 0) return 0;
    *data = malloc((size_t)n);
    if (*data == NULL) {
        throw_oom(env);
        return 1;
    }
    (*env)->GetByteArrayRegion(env, a, 0, n, (jbyte *)*data);
    return (*env)->ExceptionCheck(env) ? 1 : 0;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(orphanUnitsPlan)(JNIEnv *env, jclass cls, jlong ctx,
                                                       jlong exec, jlong cfg, jlong token,
                                                       jobject progress) {
    call_state st;
    PaimonCleanupBuffer *state = NULL;
    PaimonCleanupBufferList *units = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    jobjectArray out = NULL;
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0)
        s = paimon_cleanup_orphan_units_plan(CTX(ctx), EXEC(exec), PTR(PaimonCleanupOrphanConfig, cfg),
                                             st.options, &state, &units, &err);
    call_end(env, &st, s, NULL, err);
    if (!(*env)->ExceptionCheck(env)) out = buffers_array(env, state, units);
    paimon_cleanup_buffer_free(state);
    paimon_cleanup_buffer_list_free(units);
    return out;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(orphanUnitExecute)(JNIEnv *env, jclass cls, jlong exec,
                                                       jbyteArray unit, jobjectArray keys,
                                                       jobjectArray values, jlong token,
                                                       jobject progress) {
    call_state st;
    PaimonCleanupBuffer *result = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    jsize n = keys != NULL ? (*env)->GetArrayLength(env, keys) : 0;
    char **ck = strings_from(env, keys, n), **cv = strings_from(env, values, n);
    uint8_t *data = NULL;
    size_t len = 0;
    jbyteArray out = NULL;
    (void)cls;
    if (ck == NULL || cv == NULL) {
        throw_oom(env);
    } else if (bytes_in(env, unit, &data, &len) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_orphan_unit_execute(EXEC(exec), data, len, (const char *const *)ck,
                                                   (const char *const *)cv, (size_t)n, st.options,
                                                   &result, &err);
        call_end(env, &st, s, NULL, err);
        if (!(*env)->ExceptionCheck(env)) out = buffer_bytes(env, result);
    }
    paimon_cleanup_buffer_free(result);
    free(data);
    free_strings(ck, n);
    free_strings(cv, n);
    return out;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(orphanPartialsMerge)(JNIEnv *env, jclass cls, jbyteArray a,
                                                         jbyteArray b) {
    PaimonCleanupBuffer *merged = NULL;
    PaimonCleanupError *err = NULL;
    uint8_t *da = NULL, *db = NULL;
    size_t la = 0, lb = 0;
    jbyteArray out = NULL;
    (void)cls;
    if (bytes_in(env, a, &da, &la) == 0 && bytes_in(env, b, &db, &lb) == 0 &&
        !check(env, paimon_cleanup_orphan_partials_merge(da, la, db, lb, &merged, &err), &err))
        out = buffer_bytes(env, merged);
    paimon_cleanup_buffer_free(merged);
    free(da);
    free(db);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(orphanUnitsDecide)(JNIEnv *env, jclass cls, jlong ctx,
                                                         jlong exec, jlong cfg, jobject veto,
                                                         jbyteArray state, jbyteArray merged,
                                                         jlong token, jobject progress) {
    call_state st;
    PaimonCleanupBuffer *decision = NULL;
    PaimonCleanupBufferList *units = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupOrphanConfig *config = PTR(PaimonCleanupOrphanConfig, cfg);
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *ds = NULL, *dm = NULL;
    size_t ls = 0, lm = 0;
    jobjectArray out = NULL;
    (void)cls;
    if (bytes_in(env, state, &ds, &ls) == 0 && bytes_in(env, merged, &dm, &lm) == 0) {
        if (call_begin(env, &st, token, progress, veto) == 0) {
            /* The config is this call's own (OrphanUnits creates one per call). */
            s = paimon_cleanup_orphan_config_set_veto(config, st.veto != NULL ? veto_trampoline : NULL,
                                                      &st, &err);
            if (s == PAIMON_CLEANUP_STATUS_OK)
                s = paimon_cleanup_orphan_units_decide(CTX(ctx), EXEC(exec), config, st.options, ds,
                                                       ls, dm, lm, &decision, &units, &err);
            if (st.veto != NULL) paimon_cleanup_orphan_config_set_veto(config, NULL, NULL, NULL);
        }
        call_end(env, &st, s, NULL, err);
        if (!(*env)->ExceptionCheck(env)) out = buffers_array(env, decision, units);
    }
    paimon_cleanup_buffer_free(decision);
    paimon_cleanup_buffer_list_free(units);
    free(ds);
    free(dm);
    return out;
}

JNIEXPORT jlong JNICALL JNI_FN(orphanUnitsFinish)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                                  jbyteArray decision, jbyteArray merged,
                                                  jlong token, jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *dd = NULL, *dm = NULL;
    size_t ld = 0, lm = 0;
    jlong out = 0;
    (void)cls;
    if (bytes_in(env, decision, &dd, &ld) == 0 && bytes_in(env, merged, &dm, &lm) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_orphan_units_finish(CTX(ctx), EXEC(exec), st.options, dd, ld, dm, lm,
                                                   &report, &err);
        out = call_end(env, &st, s, report, err);
    }
    free(dd);
    free(dm);
    return out;
}

/* The C signature both partial-split calls (orphans, expiry) share. */
typedef PaimonCleanupStatus (*split_fn)(const uint8_t *, size_t, uint32_t, PaimonCleanupBuffer **,
                                        PaimonCleanupBufferList **, PaimonCleanupError **);

/* { summary, piece 0, piece 1, ... } of `split` on a Java byte[] (NULL, with an exception
 * pending, on failure). */
static jobjectArray partial_split(JNIEnv *env, split_fn split, jbyteArray partial, jint shards) {
    PaimonCleanupBuffer *summary = NULL;
    PaimonCleanupBufferList *pieces = NULL;
    PaimonCleanupError *err = NULL;
    uint8_t *dp = NULL;
    size_t lp = 0;
    jobjectArray out = NULL;
    if (shards < 0) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "the shard count is negative");
        return NULL;
    }
    if (bytes_in(env, partial, &dp, &lp) == 0 &&
        !check(env, split(dp, lp, (uint32_t)shards, &summary, &pieces, &err), &err))
        out = buffers_array(env, summary, pieces);
    paimon_cleanup_buffer_free(summary);
    paimon_cleanup_buffer_list_free(pieces);
    free(dp);
    return out;
}

/* malloc'ed copies of the byte[] elements of a byte[][] into *data / *lens (*n of them, both
 * arrays allocated even for none). Returns 0 on success; on failure an exception is pending and
 * what was copied is left for byte_strings_free. */
static int byte_strings_in(JNIEnv *env, jobjectArray array, uint8_t ***data, size_t **lens,
                           size_t *n) {
    jsize count = array != NULL ? (*env)->GetArrayLength(env, array) : 0;
    jbyteArray r;
    size_t i;
    int ok;
    *n = (size_t)count;
    *data = calloc(*n + 1, sizeof(uint8_t *));
    *lens = calloc(*n + 1, sizeof(size_t));
    ok = *data != NULL && *lens != NULL;
    if (!ok) throw_oom(env);
    for (i = 0; ok && i < *n; i++) {
        r = (jbyteArray)(*env)->GetObjectArrayElement(env, array, (jsize)i);
        ok = !(*env)->ExceptionCheck(env) && bytes_in(env, r, &(*data)[i], &(*lens)[i]) == 0;
        if (r != NULL) (*env)->DeleteLocalRef(env, r);
    }
    return ok ? 0 : 1;
}

static void byte_strings_free(uint8_t **data, size_t *lens, size_t n) {
    size_t i;
    if (data != NULL)
        for (i = 0; i < n; i++) free(data[i]);
    free(data);
    free(lens);
}

JNIEXPORT jobjectArray JNICALL JNI_FN(orphanPartialSplit)(JNIEnv *env, jclass cls, jbyteArray partial,
                                                         jint shards) {
    (void)cls;
    return partial_split(env, paimon_cleanup_orphan_partial_split, partial, shards);
}

JNIEXPORT jobjectArray JNICALL JNI_FN(orphanUnitsGate)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                                       jbyteArray state, jbyteArray summary,
                                                       jint shards, jlong token, jobject progress) {
    call_state st;
    PaimonCleanupBuffer *new_state = NULL, *gate = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *ds = NULL, *dm = NULL;
    size_t ls = 0, lm = 0;
    bool decide = false;
    jobjectArray out = NULL;
    jbyteArray b;
    (void)cls;
    if (shards < 0) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "the shard count is negative");
        return NULL;
    }
    if (bytes_in(env, state, &ds, &ls) == 0 && bytes_in(env, summary, &dm, &lm) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_orphan_units_gate(CTX(ctx), EXEC(exec), st.options, ds, ls, dm, lm,
                                                 (uint32_t)shards, &new_state, &gate, &decide,
                                                 &err);
        call_end(env, &st, s, NULL, err);
        /* { state, gate, { decide } } */
        if (!(*env)->ExceptionCheck(env)) {
            out = (*env)->NewObjectArray(env, 3, g_bytes_class, NULL);
            if (out != NULL) {
                jbyte flag = decide ? 1 : 0;
                b = buffer_bytes(env, new_state);
                if (b != NULL) (*env)->SetObjectArrayElement(env, out, 0, b);
                b = b != NULL ? buffer_bytes(env, gate) : NULL;
                if (b != NULL) (*env)->SetObjectArrayElement(env, out, 1, b);
                b = b != NULL ? (*env)->NewByteArray(env, 1) : NULL;
                if (b != NULL) {
                    (*env)->SetByteArrayRegion(env, b, 0, 1, &flag);
                    (*env)->SetObjectArrayElement(env, out, 2, b);
                }
                if ((*env)->ExceptionCheck(env)) out = NULL;
            }
        }
    }
    paimon_cleanup_buffer_free(new_state);
    paimon_cleanup_buffer_free(gate);
    free(ds);
    free(dm);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(orphanShardDecide)(JNIEnv *env, jclass cls, jlong ctx,
                                                         jlong exec, jlong cfg, jobject veto,
                                                         jbyteArray gate, jint shard,
                                                         jbyteArray piece, jlong token,
                                                         jobject progress) {
    call_state st;
    PaimonCleanupBuffer *report = NULL;
    PaimonCleanupBufferList *units = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupOrphanConfig *config = PTR(PaimonCleanupOrphanConfig, cfg);
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *dg = NULL, *dp = NULL;
    size_t lg = 0, lp = 0;
    jobjectArray out = NULL;
    (void)cls;
    if (shard < 0) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "the shard is negative");
        return NULL;
    }
    if (bytes_in(env, gate, &dg, &lg) == 0 && bytes_in(env, piece, &dp, &lp) == 0) {
        if (call_begin(env, &st, token, progress, veto) == 0) {
            /* The config is this call's own (OrphanUnits creates one per call). */
            s = paimon_cleanup_orphan_config_set_veto(config, st.veto != NULL ? veto_trampoline : NULL,
                                                      &st, &err);
            if (s == PAIMON_CLEANUP_STATUS_OK)
                s = paimon_cleanup_orphan_shard_decide(CTX(ctx), EXEC(exec), config, st.options, dg,
                                                       lg, (uint32_t)shard, dp, lp, &report, &units,
                                                       &err);
            if (st.veto != NULL) paimon_cleanup_orphan_config_set_veto(config, NULL, NULL, NULL);
        }
        call_end(env, &st, s, NULL, err);
        if (!(*env)->ExceptionCheck(env)) out = buffers_array(env, report, units);
    }
    paimon_cleanup_buffer_free(report);
    paimon_cleanup_buffer_list_free(units);
    free(dg);
    free(dp);
    return out;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(orphanUnitsConclude)(JNIEnv *env, jclass cls, jbyteArray state,
                                                         jbyteArray summary, jobjectArray reports) {
    PaimonCleanupBuffer *decision = NULL;
    PaimonCleanupError *err = NULL;
    uint8_t *ds = NULL, *dm = NULL, **data = NULL;
    size_t ls = 0, lm = 0, n = 0, *lens = NULL;
    jbyteArray out = NULL;
    (void)cls;
    if (byte_strings_in(env, reports, &data, &lens, &n) == 0 && bytes_in(env, state, &ds, &ls) == 0 &&
        bytes_in(env, summary, &dm, &lm) == 0 &&
        !check(env,
               paimon_cleanup_orphan_units_conclude(ds, ls, dm, lm, (const uint8_t *const *)data,
                                                    lens, n, &decision, &err),
               &err))
        out = buffer_bytes(env, decision);
    paimon_cleanup_buffer_free(decision);
    byte_strings_free(data, lens, n);
    free(ds);
    free(dm);
    return out;
}

/* ---- reports (field numbers shared with Report.java) -------------------------------------- */

#define REPORT(h) PTR(const PaimonCleanupReport, h)

JNIEXPORT jlong JNICALL JNI_FN(reportLong)(JNIEnv *env, jclass cls, jlong h, jint field) {
    const PaimonCleanupReport *r = REPORT(h);
    (void)env;
    (void)cls;
    switch (field) {
        case 0: return (jlong)paimon_cleanup_report_kind(r);
        case 1: return paimon_cleanup_report_dry_run(r) ? 1 : 0;
        case 2: return (jlong)paimon_cleanup_report_expired_count(r);
        case 3: return paimon_cleanup_report_has_expired_range(r) ? 1 : 0;
        case 4: return (jlong)paimon_cleanup_report_first_expired_id(r);
        case 5: return (jlong)paimon_cleanup_report_last_expired_id(r);
        case 6: return paimon_cleanup_report_has_earliest_after(r) ? 1 : 0;
        case 7: return (jlong)paimon_cleanup_report_earliest_after_id(r);
        case 8: return (jlong)paimon_cleanup_report_changelogs_written(r);
        case 9: return (jlong)paimon_cleanup_report_total_files(r);
        case 10: return (jlong)paimon_cleanup_report_total_bytes(r);
        case 11: return (jlong)paimon_cleanup_report_dirs_removed(r);
        case 12: return (jlong)paimon_cleanup_report_files_marked_deleted(r);
        case 13: return (jlong)paimon_cleanup_report_rows_marked_deleted(r);
        case 14: return (jlong)paimon_cleanup_report_bytes_marked_deleted(r);
        case 15: return (jlong)paimon_cleanup_report_cutoff_ms(r);
        case 16: return (jlong)paimon_cleanup_report_candidates(r);
        case 17: return (jlong)paimon_cleanup_report_referenced(r);
        case 18: return (jlong)paimon_cleanup_report_vetoed(r);
        case 19: return (jlong)paimon_cleanup_report_elapsed_ms(r);
        case 20: return (jlong)paimon_cleanup_report_step_count(r);
        case 21: return (jlong)paimon_cleanup_report_committed_snapshot_count(r);
        case 22: return (jlong)paimon_cleanup_report_name_count(r);
        case 23: return paimon_cleanup_report_paths_elsewhere(r) ? 1 : 0;
        default: return 0;
    }
}

JNIEXPORT jlong JNICALL JNI_FN(reportFiles)(JNIEnv *env, jclass cls, jlong h, jint c) {
    (void)env;
    (void)cls;
    return (jlong)paimon_cleanup_report_files(REPORT(h), c);
}

JNIEXPORT jlong JNICALL JNI_FN(reportBytes)(JNIEnv *env, jclass cls, jlong h, jint c) {
    (void)env;
    (void)cls;
    return (jlong)paimon_cleanup_report_bytes(REPORT(h), c);
}

/* Length of the report's string list `which`: 0 paths, 1 failed paths, 2 failed errors,
 * 3 names, 4 missing, 5 warnings. */
static size_t report_list_count(const PaimonCleanupReport *r, jint which) {
    switch (which) {
        case 0: return paimon_cleanup_report_path_count(r);
        case 1:
        case 2: return paimon_cleanup_report_failed_count(r);
        case 3: return paimon_cleanup_report_name_count(r);
        case 4: return paimon_cleanup_report_missing_count(r);
        case 5: return paimon_cleanup_report_warning_count(r);
        default: return 0;
    }
}

/* Item `i` of list `which` (as report_list_count); "" where the library gives none. */
static const char *report_list_item(const PaimonCleanupReport *r, jint which, size_t i) {
    const char *s;
    switch (which) {
        case 0: s = paimon_cleanup_report_path(r, i); break;
        case 1: s = paimon_cleanup_report_failed_path(r, i); break;
        case 2: s = paimon_cleanup_report_failed_error(r, i); break;
        case 3: s = paimon_cleanup_report_name(r, i); break;
        case 4: s = paimon_cleanup_report_missing(r, i); break;
        default: s = paimon_cleanup_report_warning(r, i); break;
    }
    return s != NULL ? s : "";
}

/* Items `start..end` of list `which` as a byte[][] (NULL with an exception pending). */
static jobjectArray report_list_slice(JNIEnv *env, const PaimonCleanupReport *r, jint which, size_t start,
                                      size_t end) {
    size_t i;
    jobjectArray out = (*env)->NewObjectArray(env, (jsize)(end - start), g_bytes_class, NULL);
    for (i = start; out != NULL && i < end; i++) {
        jbyteArray b = to_bytes(env, report_list_item(r, which, i));
        if (b == NULL) return NULL; /* OutOfMemoryError pending */
        (*env)->SetObjectArrayElement(env, out, (jsize)(i - start), b);
        (*env)->DeleteLocalRef(env, b);
    }
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(reportStrings)(JNIEnv *env, jclass cls, jlong h, jint which) {
    const PaimonCleanupReport *r = REPORT(h);
    (void)cls;
    return report_list_slice(env, r, which, 0, report_list_count(r, which));
}

JNIEXPORT jintArray JNICALL JNI_FN(reportPathClasses)(JNIEnv *env, jclass cls, jlong h) {
    const PaimonCleanupReport *r = REPORT(h);
    size_t n = paimon_cleanup_report_path_count(r), i;
    jint *v = malloc((n > 0 ? n : 1) * sizeof *v);
    jintArray out;
    (void)cls;
    if (v == NULL) {
        throw_oom(env);
        return NULL;
    }
    for (i = 0; i < n; i++) v[i] = (jint)paimon_cleanup_report_path_class(r, i);
    out = (*env)->NewIntArray(env, (jsize)n);
    if (out != NULL) (*env)->SetIntArrayRegion(env, out, 0, (jsize)n, v);
    free(v);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(reportPartition)(JNIEnv *env, jclass cls, jlong h, jint index) {
    const PaimonCleanupReport *r = REPORT(h);
    size_t fields = index >= 0 ? paimon_cleanup_report_partition_field_count(r, (size_t)index) : 0;
    size_t f;
    jobjectArray out = (*env)->NewObjectArray(env, (jsize)(2 * fields), g_bytes_class, NULL);
    (void)cls;
    for (f = 0; out != NULL && f < fields; f++) {
        jbyteArray k = to_bytes(env, paimon_cleanup_report_partition_key(r, (size_t)index, f));
        jbyteArray v = to_bytes(env, paimon_cleanup_report_partition_value(r, (size_t)index, f));
        if ((*env)->ExceptionCheck(env)) return NULL;
        (*env)->SetObjectArrayElement(env, out, (jsize)(2 * f), k);
        (*env)->SetObjectArrayElement(env, out, (jsize)(2 * f + 1), v);
        (*env)->DeleteLocalRef(env, k);
        (*env)->DeleteLocalRef(env, v);
    }
    return out;
}

JNIEXPORT jlongArray JNICALL JNI_FN(reportCommitted)(JNIEnv *env, jclass cls, jlong h) {
    const PaimonCleanupReport *r = REPORT(h);
    size_t n = paimon_cleanup_report_committed_snapshot_count(r), i;
    jlongArray out = (*env)->NewLongArray(env, (jsize)n);
    (void)cls;
    for (i = 0; out != NULL && i < n; i++) {
        jlong id = (jlong)paimon_cleanup_report_committed_snapshot_id(r, i);
        (*env)->SetLongArrayRegion(env, out, (jsize)i, 1, &id);
    }
    return out;
}

JNIEXPORT jlong JNICALL JNI_FN(reportStep)(JNIEnv *env, jclass cls, jlong h, jint index) {
    (void)env;
    (void)cls;
    if (index < 0) return 0;
    return HANDLE(paimon_cleanup_report_step(REPORT(h), (size_t)index));
}

/* Strings `from..from+count` (clamped to the list) of list `which` (ids as reportStrings), so
 * that a long list is copied into the JVM a slice at a time. */
JNIEXPORT jobjectArray JNICALL JNI_FN(reportStringsRange)(JNIEnv *env, jclass cls, jlong h, jint which,
                                                          jint from, jint count) {
    const PaimonCleanupReport *r = REPORT(h);
    size_t n = report_list_count(r, which), start, end;
    (void)cls;
    start = from > 0 ? (size_t)from : 0;
    if (start > n) start = n;
    end = count > 0 ? start + (size_t)count : start;
    if (end > n) end = n;
    return report_list_slice(env, r, which, start, end);
}

/* Length in bytes of the report's JSON document (built and cached by the library). */
JNIEXPORT jlong JNICALL JNI_FN(reportJsonLength)(JNIEnv *env, jclass cls, jlong h) {
    const char *s = paimon_cleanup_report_json(REPORT(h));
    (void)env;
    (void)cls;
    return s != NULL ? (jlong)strlen(s) : 0;
}

/* Bytes `offset..offset+len` of the JSON document; `offset` must not exceed reportJsonLength
 * (the copy stops at the document's end). */
JNIEXPORT jbyteArray JNICALL JNI_FN(reportJsonRange)(JNIEnv *env, jclass cls, jlong h, jlong offset,
                                                     jint len) {
    const char *s = paimon_cleanup_report_json(REPORT(h));
    const char *end;
    jsize n;
    jbyteArray out;
    (void)cls;
    if (s == NULL || offset < 0 || len <= 0) return (*env)->NewByteArray(env, 0);
    s += offset;
    end = memchr(s, 0, (size_t)len);
    n = end != NULL ? (jsize)(end - s) : len;
    out = (*env)->NewByteArray(env, n);
    if (out == NULL) return NULL; /* OutOfMemoryError pending */
    (*env)->SetByteArrayRegion(env, out, 0, n, (const jbyte *)s);
    return (*env)->ExceptionCheck(env) ? NULL : out;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(reportJson)(JNIEnv *env, jclass cls, jlong h) {
    (void)cls;
    return to_bytes(env, paimon_cleanup_report_json(REPORT(h)));
}

JNIEXPORT void JNICALL JNI_FN(reportFree)(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    paimon_cleanup_report_free(PTR(PaimonCleanupReport, h));
}

/* ---- test hook: callbacks from threads the JVM never saw ----------------------------------- */

typedef struct {
    call_state *st;
    int calls;
} foreign_arg;

static void *foreign_thread_main(void *p) {
    foreign_arg *a = p;
    int i;
    for (i = 0; i < a->calls; i++)
        progress_trampoline(a->st, "foreign thread", (uint64_t)i + 1, (uint64_t)a->calls, 0);
    return NULL;
}

/* Calls `progress` `calls` times from each of `threads` new native threads, as the executor's
 * worker threads do: exercises the attach / detach-at-exit path and the rethrow of a listener's
 * exception. Used by PaimonCleanupTest only. */
JNIEXPORT void JNICALL JNI_FN(foreignThreadSelfTest)(JNIEnv *env, jclass cls, jobject progress,
                                                     jint threads, jint calls) {
    call_state st;
    pthread_t tids[16];
    foreign_arg arg;
    int n = threads < 1 ? 1 : (threads > 16 ? 16 : threads), started = 0, i;
    PaimonCleanupError *err = NULL;
    PaimonCleanupCancelToken *token = NULL;
    (void)cls;
    if (check(env, paimon_cleanup_cancel_token_new(&token, &err), &err)) return;
    memset(&st, 0, sizeof st);
    pthread_mutex_init(&st.lock, NULL);
    st.token = token;
    st.progress = (*env)->NewGlobalRef(env, progress);
    arg.st = &st;
    arg.calls = calls;
    for (i = 0; i < n; i++)
        if (pthread_create(&tids[i], NULL, foreign_thread_main, &arg) == 0) started++;
    for (i = 0; i < started; i++) pthread_join(tids[i], NULL);
    (*env)->DeleteGlobalRef(env, st.progress);
    paimon_cleanup_cancel_token_free(token);
    if (st.pending != NULL) {
        (*env)->Throw(env, st.pending);
        (*env)->DeleteGlobalRef(env, st.pending);
    } else if (started != n) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INTERNAL, "pthread_create failed");
    }
    pthread_mutex_destroy(&st.lock);
}

/* ---- snapshot expiry as units (ExpiryUnits.java) ------------------------------------------- */

JNIEXPORT jobjectArray JNICALL JNI_FN(expiryUnitsPlan)(JNIEnv *env, jclass cls, jlong ctx,
                                                       jlong exec, jlong cfg, jlong token,
                                                       jobject progress) {
    call_state st;
    PaimonCleanupBuffer *state = NULL;
    PaimonCleanupBufferList *units = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    jobjectArray out = NULL;
    (void)cls;
    if (call_begin(env, &st, token, progress, NULL) == 0)
        s = paimon_cleanup_expiry_units_plan(CTX(ctx), EXEC(exec), PTR(PaimonCleanupExpireConfig, cfg),
                                             st.options, &state, &units, &err);
    call_end(env, &st, s, NULL, err);
    if (!(*env)->ExceptionCheck(env)) out = buffers_array(env, state, units);
    paimon_cleanup_buffer_free(state);
    paimon_cleanup_buffer_list_free(units);
    return out;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(expiryUnitExecute)(JNIEnv *env, jclass cls, jlong exec,
                                                       jbyteArray unit, jobjectArray keys,
                                                       jobjectArray values, jlong token,
                                                       jobject progress) {
    call_state st;
    PaimonCleanupBuffer *result = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    jsize n = keys != NULL ? (*env)->GetArrayLength(env, keys) : 0;
    char **ck = strings_from(env, keys, n), **cv = strings_from(env, values, n);
    uint8_t *data = NULL;
    size_t len = 0;
    jbyteArray out = NULL;
    (void)cls;
    if (ck == NULL || cv == NULL) {
        throw_oom(env);
    } else if (bytes_in(env, unit, &data, &len) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_expiry_unit_execute(EXEC(exec), data, len, (const char *const *)ck,
                                                   (const char *const *)cv, (size_t)n, st.options,
                                                   &result, &err);
        call_end(env, &st, s, NULL, err);
        if (!(*env)->ExceptionCheck(env)) out = buffer_bytes(env, result);
    }
    paimon_cleanup_buffer_free(result);
    free(data);
    free_strings(ck, n);
    free_strings(cv, n);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(expiryUnitExecutePaths)(JNIEnv *env, jclass cls, jlong exec,
                                                              jbyteArray unit, jobjectArray keys,
                                                              jobjectArray values, jlong token,
                                                              jobject progress) {
    call_state st;
    PaimonCleanupBuffer *result = NULL;
    PaimonCleanupBufferList *paths = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    jsize n = keys != NULL ? (*env)->GetArrayLength(env, keys) : 0;
    char **ck = strings_from(env, keys, n), **cv = strings_from(env, values, n);
    uint8_t *data = NULL;
    size_t len = 0;
    jobjectArray out = NULL;
    jbyteArray b;
    (void)cls;
    if (ck == NULL || cv == NULL) {
        throw_oom(env);
    } else if (bytes_in(env, unit, &data, &len) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_expiry_unit_execute_paths(
                EXEC(exec), data, len, (const char *const *)ck, (const char *const *)cv,
                (size_t)n, st.options, &result, &paths, &err);
        call_end(env, &st, s, NULL, err);
        /* { result, the paths joined } */
        if (!(*env)->ExceptionCheck(env)) {
            out = (*env)->NewObjectArray(env, 2, g_bytes_class, NULL);
            b = out != NULL ? buffer_bytes(env, result) : NULL;
            if (b != NULL) (*env)->SetObjectArrayElement(env, out, 0, b);
            b = b != NULL ? joined_bytes(env, paths) : NULL;
            if (b != NULL) (*env)->SetObjectArrayElement(env, out, 1, b);
            if ((*env)->ExceptionCheck(env)) out = NULL;
        }
    }
    paimon_cleanup_buffer_free(result);
    paimon_cleanup_buffer_list_free(paths);
    free(data);
    free_strings(ck, n);
    free_strings(cv, n);
    return out;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(expiryPartialsMerge)(JNIEnv *env, jclass cls, jbyteArray a,
                                                         jbyteArray b) {
    PaimonCleanupBuffer *merged = NULL;
    PaimonCleanupError *err = NULL;
    uint8_t *da = NULL, *db = NULL;
    size_t la = 0, lb = 0;
    jbyteArray out = NULL;
    (void)cls;
    if (bytes_in(env, a, &da, &la) == 0 && bytes_in(env, b, &db, &lb) == 0 &&
        !check(env, paimon_cleanup_expiry_partials_merge(da, la, db, lb, &merged, &err), &err))
        out = buffer_bytes(env, merged);
    paimon_cleanup_buffer_free(merged);
    free(da);
    free(db);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(expiryUnitsProtect)(JNIEnv *env, jclass cls, jlong ctx,
                                                          jlong exec, jbyteArray state,
                                                          jbyteArray candidates, jlong token,
                                                          jobject progress) {
    call_state st;
    PaimonCleanupBuffer *next = NULL;
    PaimonCleanupBufferList *units = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *ds = NULL, *dc = NULL;
    size_t ls = 0, lc = 0;
    jobjectArray out = NULL;
    (void)cls;
    if (bytes_in(env, state, &ds, &ls) == 0 && bytes_in(env, candidates, &dc, &lc) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_expiry_units_protect(CTX(ctx), EXEC(exec), st.options, ds, ls, dc, lc,
                                                    &next, &units, &err);
        call_end(env, &st, s, NULL, err);
        if (!(*env)->ExceptionCheck(env)) out = buffers_array(env, next, units);
    }
    paimon_cleanup_buffer_free(next);
    paimon_cleanup_buffer_list_free(units);
    free(ds);
    free(dc);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(expiryUnitsDecide)(JNIEnv *env, jclass cls, jlong ctx,
                                                         jlong exec, jbyteArray state,
                                                         jbyteArray candidates, jbyteArray protected_,
                                                         jlong token, jobject progress) {
    call_state st;
    PaimonCleanupBuffer *decision = NULL;
    PaimonCleanupBufferList *units = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *ds = NULL, *dc = NULL, *dp = NULL;
    size_t ls = 0, lc = 0, lp = 0;
    jobjectArray out = NULL;
    (void)cls;
    if (bytes_in(env, state, &ds, &ls) == 0 && bytes_in(env, candidates, &dc, &lc) == 0 &&
        bytes_in(env, protected_, &dp, &lp) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_expiry_units_decide(CTX(ctx), EXEC(exec), st.options, ds, ls, dc, lc,
                                                   dp, lp, &decision, &units, &err);
        call_end(env, &st, s, NULL, err);
        if (!(*env)->ExceptionCheck(env)) out = buffers_array(env, decision, units);
    }
    paimon_cleanup_buffer_free(decision);
    paimon_cleanup_buffer_list_free(units);
    free(ds);
    free(dc);
    free(dp);
    return out;
}

JNIEXPORT jlong JNICALL JNI_FN(expiryUnitsFinish)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                                  jbyteArray decision, jbyteArray merged,
                                                  jlong token, jobject progress) {
    call_state st;
    PaimonCleanupReport *report = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *dd = NULL, *dm = NULL;
    size_t ld = 0, lm = 0;
    jlong out = 0;
    (void)cls;
    if (bytes_in(env, decision, &dd, &ld) == 0 && bytes_in(env, merged, &dm, &lm) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_expiry_units_finish(CTX(ctx), EXEC(exec), st.options, dd, ld, dm, lm,
                                                   &report, &err);
        out = call_end(env, &st, s, report, err);
    }
    free(dd);
    free(dm);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(expiryPartialSplit)(JNIEnv *env, jclass cls, jbyteArray partial,
                                                         jint shards) {
    (void)cls;
    return partial_split(env, paimon_cleanup_expiry_partial_split, partial, shards);
}

JNIEXPORT jobjectArray JNICALL JNI_FN(expiryUnitsGate)(JNIEnv *env, jclass cls, jlong ctx, jlong exec,
                                                       jbyteArray state, jbyteArray summary,
                                                       jint shards, jboolean pathsToTasks,
                                                       jlong token, jobject progress) {
    call_state st;
    PaimonCleanupBuffer *decision = NULL, *gate = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    uint8_t *ds = NULL, *dm = NULL;
    size_t ls = 0, lm = 0;
    jobjectArray out = NULL;
    jbyteArray b;
    (void)cls;
    if (shards < 0) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "the shard count is negative");
        return NULL;
    }
    if (bytes_in(env, state, &ds, &ls) == 0 && bytes_in(env, summary, &dm, &lm) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_expiry_units_gate_with_paths(
                CTX(ctx), EXEC(exec), st.options, ds, ls, dm, lm, (uint32_t)shards,
                pathsToTasks == JNI_TRUE, &decision, &gate, &err);
        call_end(env, &st, s, NULL, err);
        /* { decision, gate } */
        if (!(*env)->ExceptionCheck(env)) {
            out = (*env)->NewObjectArray(env, 2, g_bytes_class, NULL);
            b = out != NULL ? buffer_bytes(env, decision) : NULL;
            if (b != NULL) (*env)->SetObjectArrayElement(env, out, 0, b);
            b = b != NULL ? buffer_bytes(env, gate) : NULL;
            if (b != NULL) (*env)->SetObjectArrayElement(env, out, 1, b);
            if ((*env)->ExceptionCheck(env)) out = NULL;
        }
    }
    paimon_cleanup_buffer_free(decision);
    paimon_cleanup_buffer_free(gate);
    free(ds);
    free(dm);
    return out;
}

JNIEXPORT jobjectArray JNICALL JNI_FN(expiryShardDecide)(JNIEnv *env, jclass cls, jlong exec,
                                                         jbyteArray gate, jint shard,
                                                         jbyteArray piece, jobjectArray keys,
                                                         jobjectArray values, jlong token,
                                                         jobject progress) {
    call_state st;
    PaimonCleanupBuffer *report = NULL;
    PaimonCleanupBufferList *units = NULL, *paths = NULL;
    PaimonCleanupError *err = NULL;
    PaimonCleanupStatus s = PAIMON_CLEANUP_STATUS_INTERNAL;
    jsize n = keys != NULL ? (*env)->GetArrayLength(env, keys) : 0;
    char **ck = NULL, **cv = NULL;
    uint8_t *dg = NULL, *dp = NULL;
    size_t lg = 0, lp = 0;
    jobjectArray out = NULL;
    jbyteArray joined;
    (void)cls;
    if (shard < 0) {
        throw_status(env, PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT, "the shard is negative");
        return NULL;
    }
    ck = strings_from(env, keys, n);
    cv = strings_from(env, values, n);
    if (ck == NULL || cv == NULL) {
        throw_oom(env);
    } else if (bytes_in(env, gate, &dg, &lg) == 0 && bytes_in(env, piece, &dp, &lp) == 0) {
        if (call_begin(env, &st, token, progress, NULL) == 0)
            s = paimon_cleanup_expiry_shard_decide_paths(
                EXEC(exec), dg, lg, (uint32_t)shard, dp, lp, (const char *const *)ck,
                (const char *const *)cv, (size_t)n, st.options, &report, &units, &paths, &err);
        call_end(env, &st, s, NULL, err);
        /* { report, the paths joined, delete units... } */
        if (!(*env)->ExceptionCheck(env)) {
            joined = joined_bytes(env, paths);
            out = joined != NULL ? buffers_array_at(env, report, units, 2) : NULL;
            if (out != NULL) (*env)->SetObjectArrayElement(env, out, 1, joined);
            if ((*env)->ExceptionCheck(env)) out = NULL;
        }
    }
    paimon_cleanup_buffer_free(report);
    paimon_cleanup_buffer_list_free(units);
    paimon_cleanup_buffer_list_free(paths);
    free(dg);
    free(dp);
    free_strings(ck, n);
    free_strings(cv, n);
    return out;
}

JNIEXPORT jbyteArray JNICALL JNI_FN(expiryUnitsConclude)(JNIEnv *env, jclass cls,
                                                         jbyteArray decision, jobjectArray reports) {
    PaimonCleanupBuffer *concluded = NULL;
    PaimonCleanupError *err = NULL;
    uint8_t *dd = NULL, **data = NULL;
    size_t ld = 0, n = 0, *lens = NULL;
    jbyteArray out = NULL;
    (void)cls;
    if (byte_strings_in(env, reports, &data, &lens, &n) == 0 &&
        bytes_in(env, decision, &dd, &ld) == 0 &&
        !check(env,
               paimon_cleanup_expiry_units_conclude(dd, ld, (const uint8_t *const *)data, lens, n,
                                                    &concluded, &err),
               &err))
        out = buffer_bytes(env, concluded);
    paimon_cleanup_buffer_free(concluded);
    byte_strings_free(data, lens, n);
    free(dd);
    return out;
}
