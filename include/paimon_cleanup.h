/*
 * paimon_cleanup.h - C API of paimon-cleanup, Apache Paimon table maintenance.
 * Licensed under the Apache License, Version 2.0.
 *
 * CONVENTIONS (the same text lives in docs/c-api.md)
 *
 * Naming
 *   Functions are paimon_cleanup_<object>_<verb>; types are PaimonCleanup<Name>; macros and
 *   enumerators are PAIMON_CLEANUP_<NAME>. Nothing else is exported.
 *
 * Handles and ownership
 *   Every PaimonCleanup<Object> handle (executor, context, error, the config handles, run
 *   options, cancel token, report) is opaque. The library creates it (paimon_cleanup_<object>_new,
 *   a failed call handing out an error, an operation handing out a report) and the caller owns it
 *   until it passes it to the matching paimon_cleanup_<object>_free, exactly once. Every _free
 *   accepts NULL. Sub-reports (paimon_cleanup_report_step) belong to their parent report.
 *   Arguments are borrowed for the duration of the call only: the library copies every string
 *   it keeps and never holds a caller pointer after returning. Strings returned by the library
 *   are either static (paimon_cleanup_version, paimon_cleanup_status_name, ..._name: never free
 *   them) or borrowed from the object they came from (paimon_cleanup_error_message, the
 *   paimon_cleanup_report_* strings: valid until that object is freed). Plain structs
 *   (PaimonCleanupTableSummary, PaimonCleanupPartitionSpec) are allocated by the caller.
 *   Configuration grows through setters on opaque config handles, so that fields can be added
 *   without an ABI break; unset fields take the table's options, then Paimon's defaults.
 *
 * Status codes and errors
 *   Every fallible function returns a PaimonCleanupStatus: PAIMON_CLEANUP_STATUS_OK (0) on
 *   success, otherwise a stable code (table below). Results go through out-parameters, written
 *   only on success. The last parameter, PaimonCleanupError **err, may be NULL; otherwise the call
 *   always writes it: NULL on success, a new error object (status + readable UTF-8 message) on
 *   failure, which the caller reads with paimon_cleanup_error_status/_message and frees with
 *   paimon_cleanup_error_free. An error object, not a thread-local "last error", so that errors
 *   survive a host that moves work between OS threads (goroutines, JVM virtual threads).
 *
 *     0  OK                  success
 *     1  INVALID_ARGUMENT    unusable argument or option value, out-of-range number
 *     2  NOT_FOUND           the table (or a file it needs) does not exist
 *     3  MALFORMED           a metadata file cannot be decoded
 *     4  UNSUPPORTED         a table feature the library cannot handle safely
 *     5  STORAGE             file system / object store I/O failure
 *     6  PATH_REFUSED        a path outside the table's roots was refused
 *     7  CANCELLED           cancelled by the caller
 *     8  CONFLICT            a commit lost its race, or a table invariant does not hold
 *     9  INTERNAL            a bug in the library
 *    10  NULL_POINTER        a required pointer argument was NULL
 *    11  INVALID_UTF8        a string argument was not valid UTF-8
 *    12  PANIC               a panic inside the library was caught at the boundary
 *    13  MEMORY_LIMIT        the run needed more than its memory bound (nothing was changed)
 *   Codes never change meaning; new codes are only appended. Treat an unknown code as an error.
 *   No panic ever unwinds into the caller.
 *
 * Threads
 *   Every handle is thread-safe: any number of host threads may use the same handles at once
 *   (an operation copies a config when it starts; reports and errors are immutable). Calls block
 *   the calling thread until done. A handle must not be freed while another thread still uses
 *   it. Each function documents its own rules.
 *
 * Callbacks (progress, orphan veto, log)
 *   Called on the calling thread or on one of the library's threads (the executor's workers; for
 *   the log callback also its blocking I/O threads), never after the operation returned. Calls of one operation never overlap; concurrent operations may call the
 *   same callback concurrently. user_data is never touched by the library and must stay valid
 *   until the operations using it have returned. A callback must return quickly, must not throw
 *   or longjmp across the library, and must not call a blocking operation of this library; it may
 *   call paimon_cleanup_cancel_token_cancel.
 *
 * Logs
 *   Off by default. paimon_cleanup_run_options_set_log routes the log events of the operations
 *   run with those options (and only theirs) to a host callback, at a minimum level. Nothing is
 *   installed process-wide: two hosts in one process never see each other's events.
 *
 * Cancellation
 *   paimon_cleanup_cancel_token_cancel works from any thread at any time. An operation started
 *   with a cancelled token returns CANCELLED before reading anything; a running one stops at its
 *   next check (each step, each batch of deletions) with CANCELLED, leaving the table consistent.
 *
 * Choosing thread counts
 *   The executor's worker threads (paimon_cleanup_executor_new) decode metadata and drive I/O;
 *   0 = one per CPU. A process normally creates ONE executor and shares it. Inside a host that
 *   has its own pools (a JVM, a query engine) 2-4 workers are usually enough; a dedicated
 *   maintenance process can use one per CPU.
 *   The I/O concurrency (paimon_cleanup_executor_set_io_concurrency) is the number of storage
 *   requests kept in flight. It is independent of the worker count because I/O is asynchronous.
 *   0 = automatic: 8 for a local file system, 64 for object stores (S3, GCS, Azure), where each
 *   request mostly waits on the network. Lower it when the store throttles (HTTP 503/429).
 *
 * ABI versioning
 *   PAIMON_CLEANUP_ABI_VERSION (below) is the ABI this header describes; at start-up check
 *   paimon_cleanup_abi_version() == PAIMON_CLEANUP_ABI_VERSION. The ABI version is incremented
 *   when an existing function signature, struct layout, enumerator value or documented ownership
 *   rule changes. Adding functions, handle types, setters or status codes does not increment it.
 *   PAIMON_CLEANUP_VERSION is the library (crate) version.
 */


#ifndef PAIMON_CLEANUP_H
#define PAIMON_CLEANUP_H

/* Generated by cbindgen from src/ffi (see build.rs). Do not edit by hand. */

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

/** Library version this header belongs to (same as paimon_cleanup_version()). */
#define PAIMON_CLEANUP_VERSION "0.1.0"
/** Major part of PAIMON_CLEANUP_VERSION. */
#define PAIMON_CLEANUP_VERSION_MAJOR 0
/** Minor part of PAIMON_CLEANUP_VERSION. */
#define PAIMON_CLEANUP_VERSION_MINOR 1
/** Patch part of PAIMON_CLEANUP_VERSION. */
#define PAIMON_CLEANUP_VERSION_PATCH 0


/**
 * Version of the C ABI described by this header.
 *
 * Compare it with `paimon_cleanup_abi_version()` at start-up: equal numbers mean the library
 * you loaded is binary compatible with the header you compiled against. The number changes
 * whenever an existing function signature, struct layout or status code meaning changes; adding
 * functions, handles, setters or appending status codes does not change it.
 */
#define PAIMON_CLEANUP_ABI_VERSION 1

/**
 * Number of file classes: the valid `PaimonCleanupFileClass` values are 0 to
 * `PAIMON_CLEANUP_FILE_CLASS_COUNT - 1`. A library newer than the header may report more classes;
 * their files still count in the totals (`paimon_cleanup_report_total_files`).
 */
#define PAIMON_CLEANUP_FILE_CLASS_COUNT 12

/**
 * Status code returned by every fallible call. `PAIMON_CLEANUP_STATUS_OK` (0) means success;
 * every other value names one kind of failure. The numbers are stable: a code never changes
 * meaning and new codes are only appended (this does not change the ABI version).
 *
 * Codes 1-9 and 13 correspond one-to-one to the library's error kinds; 10-12 are raised by the
 * C boundary itself.
 */
enum PaimonCleanupStatus
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Success.
     */
    PAIMON_CLEANUP_STATUS_OK = 0,
    /**
     * A caller-supplied argument is unusable (bad option value, out-of-range count, duplicate
     * option key, empty URI, ...).
     */
    PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT = 1,
    /**
     * A file or directory that must exist does not (e.g. the table has no schema).
     */
    PAIMON_CLEANUP_STATUS_NOT_FOUND = 2,
    /**
     * A metadata file could not be decoded (snapshot JSON, manifest, hint file, ...).
     */
    PAIMON_CLEANUP_STATUS_MALFORMED = 3,
    /**
     * The table uses a feature the library cannot handle safely, or the operation is not
     * available in this build.
     */
    PAIMON_CLEANUP_STATUS_UNSUPPORTED = 4,
    /**
     * An I/O error from the file system or object store.
     */
    PAIMON_CLEANUP_STATUS_STORAGE = 5,
    /**
     * A path outside the table's roots was refused.
     */
    PAIMON_CLEANUP_STATUS_PATH_REFUSED = 6,
    /**
     * The operation was cancelled by the caller.
     */
    PAIMON_CLEANUP_STATUS_CANCELLED = 7,
    /**
     * A commit lost its race too many times, or a table invariant does not hold.
     */
    PAIMON_CLEANUP_STATUS_CONFLICT = 8,
    /**
     * A bug inside the library.
     */
    PAIMON_CLEANUP_STATUS_INTERNAL = 9,
    /**
     * A required pointer argument was NULL.
     */
    PAIMON_CLEANUP_STATUS_NULL_POINTER = 10,
    /**
     * A string argument was not valid UTF-8.
     */
    PAIMON_CLEANUP_STATUS_INVALID_UTF8 = 11,
    /**
     * The library panicked; the panic was caught at the boundary. Handles used by the failed
     * call stay valid and may be freed, but a host may prefer to stop using them.
     */
    PAIMON_CLEANUP_STATUS_PANIC = 12,
    /**
     * The run needed more memory than the bound set with
     * `paimon_cleanup_run_options_set_max_memory`; the message names `max_memory`, the bound and
     * what needed more. The run stopped while planning: nothing was deleted or committed.
     */
    PAIMON_CLEANUP_STATUS_MEMORY_LIMIT = 13,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum PaimonCleanupStatus PaimonCleanupStatus;
#else
typedef int32_t PaimonCleanupStatus;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Which operation produced a report. The numbers are stable; new kinds are only appended.
 */
enum PaimonCleanupReportKind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Not a report (returned for a NULL report).
     */
    PAIMON_CLEANUP_REPORT_KIND_NONE = 0,
    /**
     * `paimon_cleanup_expire_snapshots`.
     */
    PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS = 1,
    /**
     * `paimon_cleanup_expire_changelogs`.
     */
    PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CHANGELOGS = 2,
    /**
     * `paimon_cleanup_delete_tag`.
     */
    PAIMON_CLEANUP_REPORT_KIND_DELETE_TAG = 3,
    /**
     * `paimon_cleanup_expire_tags`.
     */
    PAIMON_CLEANUP_REPORT_KIND_EXPIRE_TAGS = 4,
    /**
     * `paimon_cleanup_expire_consumers`.
     */
    PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CONSUMERS = 5,
    /**
     * `paimon_cleanup_remove_orphan_files`.
     */
    PAIMON_CLEANUP_REPORT_KIND_REMOVE_ORPHAN_FILES = 6,
    /**
     * `paimon_cleanup_drop_partitions`.
     */
    PAIMON_CLEANUP_REPORT_KIND_DROP_PARTITIONS = 7,
    /**
     * `paimon_cleanup_expire_partitions`.
     */
    PAIMON_CLEANUP_REPORT_KIND_EXPIRE_PARTITIONS = 8,
    /**
     * `paimon_cleanup_maintain`: the steps that ran are sub-reports
     * (`paimon_cleanup_report_step`).
     */
    PAIMON_CLEANUP_REPORT_KIND_MAINTAIN = 9,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum PaimonCleanupReportKind PaimonCleanupReportKind;
#else
typedef int32_t PaimonCleanupReportKind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Kind of file a maintenance operation deleted (or, in a dry run, would delete). The numbers are
 * stable; new kinds are only appended. Functions that take a file class take it as an `int32_t`
 * holding one of these values; an unknown value is answered with 0 / "unknown", never an error.
 */
enum PaimonCleanupFileClass
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Data files of the table (with their extra files such as file indexes).
     */
    PAIMON_CLEANUP_FILE_CLASS_DATA = 0,
    /**
     * Changelog data files.
     */
    PAIMON_CLEANUP_FILE_CLASS_CHANGELOG_DATA = 1,
    /**
     * Manifest files.
     */
    PAIMON_CLEANUP_FILE_CLASS_MANIFEST = 2,
    /**
     * Manifest lists.
     */
    PAIMON_CLEANUP_FILE_CLASS_MANIFEST_LIST = 3,
    /**
     * Index manifests.
     */
    PAIMON_CLEANUP_FILE_CLASS_INDEX_MANIFEST = 4,
    /**
     * Index files (hash index, deletion vectors, global index).
     */
    PAIMON_CLEANUP_FILE_CLASS_INDEX = 5,
    /**
     * Statistics files.
     */
    PAIMON_CLEANUP_FILE_CLASS_STATISTICS = 6,
    /**
     * Snapshot files (`snapshot/snapshot-N`).
     */
    PAIMON_CLEANUP_FILE_CLASS_SNAPSHOT_META = 7,
    /**
     * Long-lived changelog metadata files (`changelog/changelog-N`).
     */
    PAIMON_CLEANUP_FILE_CLASS_CHANGELOG_META = 8,
    /**
     * Tag files (`tag/tag-NAME`).
     */
    PAIMON_CLEANUP_FILE_CLASS_TAG_META = 9,
    /**
     * Consumer files (`consumer/consumer-ID`).
     */
    PAIMON_CLEANUP_FILE_CLASS_CONSUMER_META = 10,
    /**
     * Anything else (temporary files, unknown leftovers found by orphan-file removal).
     */
    PAIMON_CLEANUP_FILE_CLASS_OTHER = 11,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum PaimonCleanupFileClass PaimonCleanupFileClass;
#else
typedef int32_t PaimonCleanupFileClass;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How `paimon_cleanup_expire_partitions` decides that a partition has expired
 * (`partition.expiration-strategy`). The numbers are stable.
 */
enum PaimonCleanupPartitionExpireStrategy
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * The time in the partition values (`values-time`, Paimon's default), read with the
     * timestamp formatter and pattern.
     */
    PAIMON_CLEANUP_PARTITION_EXPIRE_STRATEGY_VALUES_TIME = 0,
    /**
     * The last time a file was added to the partition (`update-time`).
     */
    PAIMON_CLEANUP_PARTITION_EXPIRE_STRATEGY_UPDATE_TIME = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum PaimonCleanupPartitionExpireStrategy PaimonCleanupPartitionExpireStrategy;
#else
typedef int32_t PaimonCleanupPartitionExpireStrategy;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Severity of a log event passed to a `PaimonCleanupLogFn`, and the minimum severity given to
 * `paimon_cleanup_run_options_set_log`. Smaller numbers are more severe. The numbers are stable.
 * Functions take and pass these values as `int32_t`.
 */
enum PaimonCleanupLogLevel
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Something failed (a run that returns an error also reports it through its status).
     */
    PAIMON_CLEANUP_LOG_LEVEL_ERROR = 1,
    /**
     * Something was deliberately left alone, or a step had to fall back (a file that could not
     * be deleted, a directory that could not be listed, a branch without schema).
     */
    PAIMON_CLEANUP_LOG_LEVEL_WARN = 2,
    /**
     * One line per milestone of a run (candidates listed, snapshots expired, commit landed).
     */
    PAIMON_CLEANUP_LOG_LEVEL_INFO = 3,
    /**
     * Details such as every storage request (`get`, `list_dir`, `put`); voluminous.
     */
    PAIMON_CLEANUP_LOG_LEVEL_DEBUG = 4,
    /**
     * Everything.
     */
    PAIMON_CLEANUP_LOG_LEVEL_TRACE = 5,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum PaimonCleanupLogLevel PaimonCleanupLogLevel;
#else
typedef int32_t PaimonCleanupLogLevel;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * One byte string handed out by the library: a unit, a partial result, a plan state or a
 * decision of orphan removal as units.
 *
 * Created by the call that returns it, owned by the caller, released with
 * `paimon_cleanup_buffer_free`. Immutable and thread-safe: any thread may read it until it is
 * freed. The bytes are opaque and versioned: store or ship them as they are.
 */
typedef struct PaimonCleanupBuffer PaimonCleanupBuffer;

/**
 * Several byte strings handed out by the library (the units of a plan or a decision).
 *
 * Created by the call that returns it, owned by the caller, released with
 * `paimon_cleanup_buffer_list_free` (which frees its buffers too). Immutable and thread-safe.
 * The buffers returned by `paimon_cleanup_buffer_list_get` are borrowed from the list.
 */
typedef struct PaimonCleanupBufferList PaimonCleanupBufferList;

/**
 * A cancellation token: a flag a host sets from any thread to stop the operations that watch it.
 *
 * Created by `paimon_cleanup_cancel_token_new`, owned by the caller, released with
 * `paimon_cleanup_cancel_token_free`. Thread-safe (`Send + Sync`). Attach it to a run-options
 * handle with `paimon_cleanup_run_options_set_cancel_token`; one token may be attached to many
 * run options (cancelling it stops all of their operations). Once cancelled it stays cancelled.
 */
typedef struct PaimonCleanupCancelToken PaimonCleanupCancelToken;

/**
 * A table context: the table location plus the options used to reach and read it.
 *
 * The options are one map of Paimon option names: storage options (credentials, endpoint,
 * region, ...) are read by the storage layer, and every option also overrides the table option
 * of the same name stored in the table schema (keys a layer does not know are ignored by it).
 * The option `branch` selects the branch every call works on (default `main`), as Paimon
 * Java's `branch` table option does.
 *
 * Created by `paimon_cleanup_context_new`, owned by the caller, released with
 * `paimon_cleanup_context_free`. Immutable and thread-safe (`Send + Sync`): one context may be
 * used by any number of calls from any number of host threads at once, with any executor.
 */
typedef struct PaimonCleanupContext PaimonCleanupContext;

/**
 * An error reported by a failed call: a status code and a readable message.
 *
 * Created by the library and handed to the caller through a `PaimonCleanupError **err`
 * out-parameter; the caller owns it and releases it with `paimon_cleanup_error_free`.
 * Immutable, so it may be read from any thread.
 */
typedef struct PaimonCleanupError PaimonCleanupError;

/**
 * An executor: owns a tokio multi-thread runtime whose worker threads run the library's
 * asynchronous work (manifest decoding, listing, deleting), and the I/O concurrency setting.
 *
 * Created by `paimon_cleanup_executor_new`, owned by the caller, released with
 * `paimon_cleanup_executor_free`. Thread-safe (`Send + Sync`): one executor may serve any number
 * of calls from any number of host threads at once; a process usually needs one.
 */
typedef struct PaimonCleanupExecutor PaimonCleanupExecutor;

/**
 * Settings of a snapshot expiry (`paimon_cleanup_expire_snapshots`) or of a long-lived
 * changelog expiry (`paimon_cleanup_expire_changelogs`).
 *
 * Every field starts unset; an unset field takes the table's option (the schema's options,
 * overridden by the context's options), then Paimon's default. For a changelog expiry the
 * retention fields fall back to `changelog.num-retained.min/max` and `changelog.time-retained`
 * first, then to the snapshot options below.
 *
 * | setter | table option | default | used by |
 * | --- | --- | --- | --- |
 * | `_set_retain_min` | `snapshot.num-retained.min` | 10 | both |
 * | `_set_retain_max` | `snapshot.num-retained.max` | 2147483647 | both |
 * | `_set_time_retained_ms` / `_set_older_than_ms` | `snapshot.time-retained` | 1 hour | both |
 * | `_set_max_expires` | `snapshot.expire.limit` | 50 | both |
 * | `_set_dry_run` | (none) | false | both |
 * | `_set_clean_empty_dirs` | `snapshot.clean-empty-directories` | false | snapshots |
 * | `_set_refuse_if_tags_pin` | (none) | false | snapshots |
 * | `_set_delete_all_changelogs` | (none) | false | changelogs |
 *
 * Created by `paimon_cleanup_expire_config_new`, owned by the caller, released with
 * `paimon_cleanup_expire_config_free`. Thread-safe (`Send + Sync`): setters may be called while
 * other threads run operations with the same config; an operation uses the values as they were
 * when it started.
 */
typedef struct PaimonCleanupExpireConfig PaimonCleanupExpireConfig;

/**
 * Settings of `paimon_cleanup_maintain`. Everything else comes from the table's options.
 *
 * Created by `paimon_cleanup_maintain_config_new`, owned by the caller, released with
 * `paimon_cleanup_maintain_config_free`. Thread-safe (`Send + Sync`): setters may be called
 * while other threads run with the same config; a run uses the values as they were when it
 * started.
 */
typedef struct PaimonCleanupMaintainConfig PaimonCleanupMaintainConfig;

/**
 * Settings of an orphan-file removal (`paimon_cleanup_remove_orphan_files`).
 *
 * | setter | default |
 * | --- | --- |
 * | `_set_older_than_ms` | now − 1 day: only files modified before the cut-off may be deleted |
 * | `_set_no_writers_running` | false: the cut-off must be at least 1 hour old |
 * | `_set_dry_run` | false |
 * | `_set_veto` | none |
 * | `_set_list_concurrency` / `_set_delete_concurrency` | the executor's I/O concurrency |
 * | `_set_external_roots_owned` | false: external data roots are neither listed nor cleaned |
 *
 * Created by `paimon_cleanup_orphan_config_new`, owned by the caller, released with
 * `paimon_cleanup_orphan_config_free`. Thread-safe (`Send + Sync`): setters may be called while
 * other threads run with the same config; a run uses the values as they were when it started.
 */
typedef struct PaimonCleanupOrphanConfig PaimonCleanupOrphanConfig;

/**
 * Settings of a partition expiry (`paimon_cleanup_expire_partitions`). Every field starts unset;
 * an unset field takes the table's option, then Paimon's default:
 *
 * | setter | table option | default |
 * | --- | --- | --- |
 * | `_set_expiration_time_ms` | `partition.expiration-time` | none: required somewhere |
 * | `_set_strategy` | `partition.expiration-strategy` | values-time |
 * | `_set_timestamp_formatter` | `partition.timestamp-formatter` | `yyyy-MM-dd` forms |
 * | `_set_timestamp_pattern` | `partition.timestamp-pattern` | the first key's value |
 * | `_set_max_expires` | `partition.expiration-max-num` | 100 |
 * | `_set_batch_size` | `partition.expiration-batch-size` | all in one commit |
 * | `_set_dry_run` | (none) | false |
 * | `_set_now_ms` | (none) | the wall clock |
 *
 * Created by `paimon_cleanup_partition_expire_config_new`, owned by the caller, released with
 * `paimon_cleanup_partition_expire_config_free`. Thread-safe (`Send + Sync`): setters may be
 * called while other threads run with the same config; a run uses the values as they were when
 * it started.
 */
typedef struct PaimonCleanupPartitionExpireConfig PaimonCleanupPartitionExpireConfig;

/**
 * The outcome of a maintenance operation.
 *
 * One opaque report type serves every operation; `paimon_cleanup_report_kind` says which one
 * produced it and the accessors that do not apply to that kind return 0 / false / NULL. Counts
 * per file class, failed deletions, the list of deleted (in a dry run: deletable) paths,
 * warnings and the JSON form are common to all kinds.
 *
 * Created by the operation (through its `PaimonCleanupReport **out` parameter), owned by the
 * caller, released with `paimon_cleanup_report_free`. Immutable and thread-safe: any thread may
 * read it until it is freed. Strings and sub-reports returned by its accessors are borrowed from
 * it and stay valid until it is freed.
 */
typedef struct PaimonCleanupReport PaimonCleanupReport;

/**
 * Options of one long operation: a progress callback, a cancellation token, a log callback and
 * a memory bound, all optional.
 *
 * Created by `paimon_cleanup_run_options_new`, owned by the caller, released with
 * `paimon_cleanup_run_options_free`. Thread-safe (`Send + Sync`): the setters may be called
 * while other threads run operations with the same options; an operation uses the settings as
 * they were when it started. Every operation taking run options also accepts NULL (no progress,
 * no cancellation).
 */
typedef struct PaimonCleanupRunOptions PaimonCleanupRunOptions;

/**
 * The tables of a warehouse, from `paimon_cleanup_warehouse_list_tables`: each table's
 * `db.table` name and its location (a local path, usable as a context's table location).
 * Opaque; read with `paimon_cleanup_table_list_count`, `_name` and `_location`, release with
 * `paimon_cleanup_table_list_free`. Immutable: any number of threads may read it at once.
 */
typedef struct PaimonCleanupTableList PaimonCleanupTableList;

/**
 * Overview of one branch of a table (the context's), filled by `paimon_cleanup_table_summary`.
 *
 * A plain struct the caller allocates (on the stack is fine); it holds no pointers and needs no
 * freeing.
 */
typedef struct PaimonCleanupTableSummary {
    /**
     * True when main has at least one snapshot; the two snapshot ids are meaningful only then.
     */
    bool has_snapshots;
    /**
     * Id of the earliest snapshot on main (0 when `has_snapshots` is false).
     */
    int64_t earliest_snapshot_id;
    /**
     * Id of the latest snapshot on main (0 when `has_snapshots` is false).
     */
    int64_t latest_snapshot_id;
    /**
     * Number of snapshot files on main.
     */
    uint64_t snapshot_count;
    /**
     * Number of tags on main.
     */
    uint64_t tag_count;
    /**
     * Number of branches other than main.
     */
    uint64_t branch_count;
    /**
     * Number of live data files in main's latest snapshot.
     */
    uint64_t live_file_count;
    /**
     * Total size in bytes of those live data files.
     */
    uint64_t live_file_bytes;
} PaimonCleanupTableSummary;

/**
 * Progress callback of a long operation.
 *
 * Arguments: the `user_data` given to `paimon_cleanup_run_options_set_progress`; `phase`, a
 * short NUL-terminated UTF-8 description of the current step (for example `"data files"`,
 * `"manifests"`), borrowed for the duration of the call only (copy it to keep it); `done` and
 * `total`, the items of that phase processed so far and in all (`total` may be 0 when unknown,
 * and may grow during a phase whose work is still being planned, as orphan removal's reading of
 * references while later versions are planned; `done` never exceeds it); `bytes`, the bytes deleted (or, in a dry run, deletable) so far in the whole run.
 *
 * Thread rules: called on the thread that called the operation or on one of the executor's
 * worker threads, never after the operation has returned. Calls belonging to one operation
 * never overlap (the library serializes them), but two operations running at once may call the
 * same callback at the same time, so shared state in `user_data` needs its own locking. The
 * callback must return quickly, must not throw a C++ exception or `longjmp` out, and must not
 * call a blocking operation of this library (it may call `paimon_cleanup_cancel_token_cancel`).
 */
typedef void (*PaimonCleanupProgressFn)(void *user_data,
                                        const char *phase,
                                        uint64_t done,
                                        uint64_t total,
                                        uint64_t bytes);

/**
 * Log callback of an operation: receives the library's log events (its `tracing` events).
 *
 * Arguments: the `user_data` given to `paimon_cleanup_run_options_set_log`; `level`, a
 * `PaimonCleanupLogLevel` value (1 = error ... 5 = trace); `target`, where the event comes from
 * (the Rust module path, e.g. `"paimon_cleanup::clean::orphans"`); `message`, the event's
 * text followed by its fields as ` key=value` pairs (e.g. `"orphan candidates listed files=12
 * candidates=3 cutoff=1700000000000"`). Both strings are NUL-terminated UTF-8, borrowed for the
 * duration of the call only: copy them to keep them.
 *
 * Thread rules: called on the thread that called the operation or on one of the library's own
 * threads (executor workers, its blocking I/O threads), never after the operation has returned.
 * Calls belonging to one operation never overlap (the library serializes them); two operations
 * running at once may call the same callback at the same time, so shared state in `user_data`
 * needs its own locking. Only events of the operation run with these options reach the
 * callback. The callback must return quickly, must not throw a C++ exception or `longjmp` out,
 * and must not call any function of this library except `paimon_cleanup_cancel_token_cancel`.
 */
typedef void (*PaimonCleanupLogFn)(void *user_data,
                                   int32_t level,
                                   const char *target,
                                   const char *message);

/**
 * Veto callback of an orphan-file removal: return true to KEEP a file the run would otherwise
 * delete (for example a file a writer outside Paimon's metadata still needs).
 *
 * Arguments: the `user_data` given to `paimon_cleanup_orphan_config_set_veto`; `path`, the file,
 * relative to the table root when it lies under it (`f1=10/bucket-0/data-….orc`,
 * `manifest/manifest-…`), else its full URI (external data paths) — the same form as the
 * report's path listing. `path` is NUL-terminated UTF-8, borrowed for the duration of the call.
 *
 * Thread rules: called once per file that would be deleted, after every reference has been read
 * and before anything is deleted (also in a dry run), on the thread that called the operation or
 * on one of the executor's worker threads, never after the operation has returned. Calls of one
 * run never overlap; two runs at once may call the same callback concurrently. It must not throw
 * a C++ exception or `longjmp` out and must not call a blocking operation of this library.
 */
typedef bool (*PaimonCleanupVetoFn)(void *user_data, const char *path);

/**
 * One partition spec for `paimon_cleanup_drop_partitions`: `field_count` key/value pairs given as
 * two parallel arrays; key `i` goes with value `i`. A partition matches when every given key has
 * the given value, so a spec naming a prefix of the partition keys (`dt` of `dt, hr`) matches
 * all partitions below it.
 *
 * Keys are partition key names (non-empty, unique within a spec). A value names a partition
 * *value*, read as Paimon Java's `convertSpecToInternalRow` reads it and matched against the
 * decoded partition row (never the directory name): a NULL pointer or the table's default
 * partition name (`partition.default-name`, `__DEFAULT_PARTITION__`) is a NULL value and matches
 * NULL only; for a string key any other text is that exact string, so `""` matches the empty
 * string only and `" "` one space only (Paimon writes all three to the directory
 * `k=__DEFAULT_PARTITION__`); other types are written as in the partition directory name or
 * in SQL (`2024-01-01` or `19723` for a DATE, `10`, `true`, `2024-01-02 03:04:05`), and an
 * empty text for them is `INVALID_ARGUMENT`.
 * A plain struct the caller fills (no ownership passes; the strings are copied by the call).
 */
typedef struct PaimonCleanupPartitionSpec {
    /**
     * `field_count` NUL-terminated UTF-8 key names.
     */
    const char *const *keys;
    /**
     * `field_count` NUL-terminated UTF-8 values (an element may be NULL: a NULL value; `""` is
     * the empty string).
     */
    const char *const *values;
    /**
     * Number of key/value pairs (at least 1).
     */
    size_t field_count;
} PaimonCleanupPartitionSpec;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Returns the library version as a NUL-terminated string, e.g. `"0.1.0"`.
 *
 * Ownership: the string is static; never free it. It stays valid for the life of the process.
 * Thread-safety: may be called from any thread at any time, before or after any other call.
 * Errors: none; never returns NULL.
 */
const char *paimon_cleanup_version(void);

/**
 * Returns the ABI version of the loaded library (`PAIMON_CLEANUP_ABI_VERSION` of the header it
 * was built with).
 *
 * A host should check `paimon_cleanup_abi_version() == PAIMON_CLEANUP_ABI_VERSION` once at
 * start-up and refuse to continue when they differ.
 * Thread-safety: may be called from any thread at any time. Errors: none.
 */
uint32_t paimon_cleanup_abi_version(void);

/**
 * Returns a short, static, lower-case name for a status code (`"ok"`, `"invalid_argument"`,
 * `"not_found"`, `"malformed"`, ...), or `"unknown"` for a number that is not a known code.
 *
 * Ownership: the string is static; never free it.
 * Thread-safety: may be called from any thread at any time. Errors: none; never returns NULL.
 */
const char *paimon_cleanup_status_name(int32_t status);

/**
 * Returns the status code carried by `error`, or `PAIMON_CLEANUP_STATUS_OK` when `error` is NULL
 * (no error object means no error).
 *
 * Ownership: `error` stays owned by the caller.
 * Thread-safety: the error object is immutable; any thread may read it until it is freed.
 *
 * # Safety
 * `error` must be NULL or a pointer obtained from this library and not yet freed.
 */
PaimonCleanupStatus paimon_cleanup_error_status(const struct PaimonCleanupError *error);

/**
 * Returns the readable, NUL-terminated, UTF-8 message of `error` (for example
 * `"malformed snapshot file /t/snapshot/snapshot-5: expected value at line 1 column 1"`), or an
 * empty string when `error` is NULL.
 *
 * Ownership: the string belongs to `error` (borrowed); it stays valid until
 * `paimon_cleanup_error_free(error)` and must not be freed on its own. Copy it to keep it longer.
 * Thread-safety: any thread may read it until the error is freed.
 *
 * # Safety
 * `error` must be NULL or a pointer obtained from this library and not yet freed.
 */
const char *paimon_cleanup_error_message(const struct PaimonCleanupError *error);

/**
 * Frees an error object and its message. NULL is accepted and ignored.
 *
 * Ownership: takes back ownership of `error`; the pointer (and any message pointer obtained from
 * it) is invalid afterwards. Free each error exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with another use of the
 * same error object.
 *
 * # Safety
 * `error` must be NULL or a pointer obtained from this library and not yet freed.
 */
void paimon_cleanup_error_free(struct PaimonCleanupError *error);

/**
 * Creates an executor whose runtime has `worker_threads` worker threads.
 *
 * `worker_threads`: 0 means one per CPU (the machine's available parallelism); otherwise
 * 1..=1024. Worker threads run CPU work (decoding manifests) and drive storage I/O; see
 * "Choosing thread counts" in the header preamble.
 * The I/O concurrency starts at 0 (automatic); change it with
 * `paimon_cleanup_executor_set_io_concurrency`.
 *
 * Ownership: on success `*out` receives a new executor owned by the caller, to be released with
 * `paimon_cleanup_executor_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `out` is NULL; `INVALID_ARGUMENT` if `worker_threads` is out of
 * range; `INTERNAL` if the threads cannot be started. `*err` (when `err` is not NULL) is set to
 * NULL on success and to a new error object on failure.
 *
 * # Safety
 * `out` must be NULL or writable; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_executor_new(uint32_t worker_threads,
                                                struct PaimonCleanupExecutor **out,
                                                struct PaimonCleanupError **err);

/**
 * Sets how many storage requests (list, get, head, delete) the operations started on this
 * executor may keep in flight. 0 restores the automatic default: 8 for tables on a local file
 * system, 64 for tables on an object store. Otherwise 1..=4096.
 *
 * Takes effect for calls that start after it returns; calls already running keep their value.
 * Used by the maintenance operations; `paimon_cleanup_table_summary` still reads with the table
 * layer's own default.
 * Ownership: `executor` stays owned by the caller.
 * Thread-safety: safe to call while other threads use the executor.
 * Errors: `NULL_POINTER` if `executor` is NULL; `INVALID_ARGUMENT` if out of range.
 *
 * # Safety
 * `executor` must be NULL or a live executor; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_executor_set_io_concurrency(struct PaimonCleanupExecutor *executor,
                                                               uint32_t io_concurrency,
                                                               struct PaimonCleanupError **err);

/**
 * Returns the number of worker threads of the executor's runtime (the resolved value when it
 * was created with 0), or 0 when `executor` is NULL.
 *
 * Thread-safety: may be called from any thread while others use the executor.
 *
 * # Safety
 * `executor` must be NULL or a live executor.
 */
uint32_t paimon_cleanup_executor_worker_threads(const struct PaimonCleanupExecutor *executor);

/**
 * Returns the I/O concurrency set on the executor (0 = automatic), or 0 when `executor` is NULL.
 *
 * Thread-safety: may be called from any thread while others use the executor.
 *
 * # Safety
 * `executor` must be NULL or a live executor.
 */
uint32_t paimon_cleanup_executor_io_concurrency(const struct PaimonCleanupExecutor *executor);

/**
 * Shuts the executor down and frees it. NULL is accepted and ignored.
 *
 * Blocks until the executor's worker threads have exited. Every call that uses the executor must
 * have returned before it is freed, and no thread may use it afterwards.
 * Ownership: takes back ownership of `executor`. Free each executor exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with any other use of the
 * same executor. Do not call it from a callback running on one of the executor's own threads.
 *
 * # Safety
 * `executor` must be NULL or a pointer from `paimon_cleanup_executor_new` not yet freed.
 */
void paimon_cleanup_executor_free(struct PaimonCleanupExecutor *executor);

/**
 * Creates a context for the table at `table_uri` with `option_count` options given as parallel
 * arrays of keys and values.
 *
 * `table_uri`: the table directory, as a local path (`/data/wh/db.db/t`), a `file://` URL or an
 * object-store URL (`s3://bucket/wh/db.db/t`); must not be empty.
 * `option_keys` / `option_values`: `option_count` NUL-terminated UTF-8 strings each; key `i`
 * goes with value `i`. Both may be NULL when `option_count` is 0. Keys must be non-empty and
 * unique. Examples: `"s3.endpoint"`, `"s3.access-key"`, `"snapshot.num-retained.min"`.
 *
 * Branch: the option key `"branch"` (value: a branch name, default `"main"`) makes every call
 * on this context work on that branch, as Paimon Java's `branch` table option does: expiry,
 * tags, consumers and partitions then change only that branch's snapshots, changelogs, tags
 * and consumers, and keep every file any version of any branch reads; orphan removal is
 * table-wide whatever the branch. A `table_uri` whose last segment is `<table>$branch_<name>`
 * names the branch too (the table root is then the URI without the suffix); if both name
 * one, they must agree. The branch's existence is checked by the calls (`NOT_FOUND`).
 *
 * The table itself is not opened here: a missing or unreadable table is reported by the calls
 * that use the context.
 *
 * Ownership: the strings are copied; the caller keeps ownership of all of its arguments. On
 * success `*out` receives a new context owned by the caller, released with
 * `paimon_cleanup_context_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `table_uri` or `out` is NULL, or if `option_count > 0` and an array
 * or one of its elements is NULL; `INVALID_UTF8` if a string is not UTF-8; `INVALID_ARGUMENT`
 * for an empty URI, an empty or duplicate key, more than 65536 options, an empty or
 * path-like branch name (`/`, `\\`, `.`, `..`), or a `$branch_` suffix and a `branch` option
 * that disagree. `*err` (when `err`
 * is not NULL) is set to NULL on success and to a new error object on failure.
 *
 * # Safety
 * `table_uri` must be NULL or NUL-terminated. When `option_count > 0`, each array must be NULL or
 * hold `option_count` readable pointers, each NULL or NUL-terminated. `out` and `err` must be
 * NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_context_new(const char *table_uri,
                                               const char *const *option_keys,
                                               const char *const *option_values,
                                               size_t option_count,
                                               struct PaimonCleanupContext **out,
                                               struct PaimonCleanupError **err);

/**
 * Frees a context. NULL is accepted and ignored.
 *
 * Every call that uses the context must have returned before it is freed.
 * Ownership: takes back ownership of `context`. Free each context exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with any other use of the
 * same context.
 *
 * # Safety
 * `context` must be NULL or a pointer from `paimon_cleanup_context_new` not yet freed.
 */
void paimon_cleanup_context_free(struct PaimonCleanupContext *context);

/**
 * Reads the table of `context` and fills `*out` with an overview of the context's branch
 * (main unless the context's `branch` option names another): snapshot range and count, tag and
 * branch counts, and the live data files of the latest snapshot.
 *
 * Read-only: nothing in the table is changed. Blocks the calling thread until done; the work
 * runs on `executor`.
 * Ownership: all arguments stay owned by the caller. `*out` is written only on success.
 * Thread-safety: any number of host threads may call it at once, with the same or different
 * contexts and executors.
 * Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `NOT_FOUND` if the table does
 * not exist; `MALFORMED` if a metadata file cannot be decoded; `STORAGE` for I/O failures;
 * `UNSUPPORTED` for table features the library cannot read; `INVALID_ARGUMENT` for a bad
 * option or URI, or when called from a thread that runs an async runtime. `*err` (when `err` is
 * not NULL) is set to NULL on success and to a new error object on failure.
 *
 * # Safety
 * `context` and `executor` must be NULL or live handles; `out` and `err` must be NULL or
 * writable.
 */
PaimonCleanupStatus paimon_cleanup_table_summary(const struct PaimonCleanupContext *context,
                                                 const struct PaimonCleanupExecutor *executor,
                                                 struct PaimonCleanupTableSummary *out,
                                                 struct PaimonCleanupError **err);

/**
 * Creates an untriggered cancellation token.
 *
 * Ownership: on success `*out` receives a new token owned by the caller, released with
 * `paimon_cleanup_cancel_token_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
 * success and to a new error object on failure.
 *
 * # Safety
 * `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_cancel_token_new(struct PaimonCleanupCancelToken **out,
                                                    struct PaimonCleanupError **err);

/**
 * Requests cancellation: every operation whose run options carry this token stops at its next
 * check (before each step and each batch of deletions; orphan-file removal also at its next
 * storage read) and returns `PAIMON_CLEANUP_STATUS_CANCELLED`.
 * An operation started after the token was cancelled returns `CANCELLED` at once, before it
 * reads or changes anything. Files already deleted by a cancelled run stay deleted; the table is
 * left in a consistent state (deletions run in crash-safe order) and a later run finishes the
 * work. Calling it again has no further effect. NULL is accepted and ignored.
 *
 * Thread-safety: may be called from any thread at any time, including from a progress callback,
 * while operations watch the token.
 *
 * # Safety
 * `token` must be NULL or a live token.
 */
void paimon_cleanup_cancel_token_cancel(const struct PaimonCleanupCancelToken *token);

/**
 * Returns true once `paimon_cleanup_cancel_token_cancel` has been called on the token; false
 * for a NULL token.
 *
 * Thread-safety: may be called from any thread at any time.
 *
 * # Safety
 * `token` must be NULL or a live token.
 */
bool paimon_cleanup_cancel_token_is_cancelled(const struct PaimonCleanupCancelToken *token);

/**
 * Frees a cancellation token. NULL is accepted and ignored.
 *
 * Run options the token was attached to keep their own reference to the flag, so freeing the
 * token does not disturb them or the operations using them; it only means nobody can cancel them
 * through this handle any more.
 * Ownership: takes back ownership of `token`. Free each token exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with another use of the
 * same token handle.
 *
 * # Safety
 * `token` must be NULL or a pointer from `paimon_cleanup_cancel_token_new` not yet freed.
 */
void paimon_cleanup_cancel_token_free(struct PaimonCleanupCancelToken *token);

/**
 * Creates run options with no progress callback and no cancellation token.
 *
 * Ownership: on success `*out` receives new run options owned by the caller, released with
 * `paimon_cleanup_run_options_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
 * success and to a new error object on failure.
 *
 * # Safety
 * `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_run_options_new(struct PaimonCleanupRunOptions **out,
                                                   struct PaimonCleanupError **err);

/**
 * Sets (or, with `callback` NULL, removes) the progress callback of operations run with these
 * options. See `PaimonCleanupProgressFn` for when and on which threads it is called.
 *
 * `user_data` is passed back unchanged to every call; the library never reads, writes or frees
 * it. It must stay valid, and usable from the library's threads, until every operation started
 * with these options has returned (the callback is never called after that).
 * Ownership: `options` stays owned by the caller.
 * Thread-safety: may be called while other threads run operations with the same options; those
 * keep the callback they started with.
 * Errors: `NULL_POINTER` if `options` is NULL.
 *
 * # Safety
 * `options` must be NULL or live; `callback` must be NULL or a function with the signature of
 * `PaimonCleanupProgressFn` that follows its thread rules; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_run_options_set_progress(struct PaimonCleanupRunOptions *options,
                                                            PaimonCleanupProgressFn callback,
                                                            void *user_data,
                                                            struct PaimonCleanupError **err);

/**
 * Attaches `token` to these options (or, with `token` NULL, detaches the current one).
 * Operations run with the options stop with `PAIMON_CLEANUP_STATUS_CANCELLED` once the token is
 * cancelled; see `paimon_cleanup_cancel_token_cancel`.
 *
 * The options keep their own reference to the token's flag: the token handle may be freed at any
 * time afterwards (but then can no longer be used to cancel).
 * Ownership: `options` and `token` stay owned by the caller.
 * Thread-safety: may be called while other threads run operations with the same options; those
 * keep the token they started with.
 * Errors: `NULL_POINTER` if `options` is NULL.
 *
 * # Safety
 * `options` must be NULL or live; `token` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_run_options_set_cancel_token(struct PaimonCleanupRunOptions *options,
                                                                const struct PaimonCleanupCancelToken *token,
                                                                struct PaimonCleanupError **err);

/**
 * Sets (or, with `callback` NULL, removes) the log callback of operations run with these
 * options: the library's log events of each such operation at `min_level` or more severe are
 * passed to `callback` (see `PaimonCleanupLogFn` for the arguments and the thread rules).
 *
 * Logging is off by default: an operation run without a log callback (or without run options)
 * reports its events to no one. Nothing is installed process-wide: each operation routes only
 * its own events to the callback of its own run options, so hosts (or threads) that use
 * different callbacks in one process never see each other's events. Events of the library's
 * dependencies that run on their own background threads are not captured.
 *
 * `min_level`: a `PaimonCleanupLogLevel` value, `PAIMON_CLEANUP_LOG_LEVEL_ERROR` (1) to
 * `PAIMON_CLEANUP_LOG_LEVEL_TRACE` (5); `INFO` gives a few lines per run, `DEBUG` a line per
 * storage request. Ignored when `callback` is NULL.
 * `user_data` is passed back unchanged to every call; the library never reads, writes or frees
 * it. It must stay valid, and usable from the library's threads, until every operation started
 * with these options has returned (the callback is never called after that).
 * Ownership: `options` stays owned by the caller.
 * Thread-safety: may be called while other threads run operations with the same options; those
 * keep the callback they started with.
 * Errors: `NULL_POINTER` if `options` is NULL; `INVALID_ARGUMENT` if `callback` is not NULL and
 * `min_level` is not a `PaimonCleanupLogLevel` (the options keep their previous callback).
 *
 * # Safety
 * `options` must be NULL or live; `callback` must be NULL or a function with the signature of
 * `PaimonCleanupLogFn` that follows its thread rules; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_run_options_set_log(struct PaimonCleanupRunOptions *options,
                                                       PaimonCleanupLogFn callback,
                                                       int32_t min_level,
                                                       void *user_data,
                                                       struct PaimonCleanupError **err);

/**
 * Sets (or, with `max_memory_bytes` 0, removes) the memory bound of operations run with these
 * options: a bound, in bytes, on what an operation's large structures (candidate files, the
 * reduced manifests that protect referenced files, the live entries a partition drop merges,
 * the deletion plan, the report's paths) may hold at once. It is the CLI's `--max-memory`.
 *
 * An operation whose plan needs more than the bound fails with
 * `PAIMON_CLEANUP_STATUS_MEMORY_LIMIT` (the message names `max_memory`, the bound and what
 * needed more) while it plans, before its first deletion or commit: a run stopped by its bound
 * has deleted and committed nothing, and the process is never left to grow until the system
 * kills it. A bound the run fits in changes nothing about what it does. The estimate counts
 * what the structures hold, not the allocator's or the runtime's own overhead, so the process's
 * resident size stays somewhat above the bound. No bound by default.
 * Ownership: `options` stays owned by the caller.
 * Thread-safety: may be called while other threads run operations with the same options; those
 * keep the bound they started with.
 * Errors: `NULL_POINTER` if `options` is NULL.
 *
 * # Safety
 * `options` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_run_options_set_max_memory(struct PaimonCleanupRunOptions *options,
                                                              uint64_t max_memory_bytes,
                                                              struct PaimonCleanupError **err);

/**
 * Frees run options. NULL is accepted and ignored.
 *
 * Every operation using the options must have returned before they are freed.
 * Ownership: takes back ownership of `options` (not of the attached token or of `user_data`).
 * Free each run-options handle exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with any other use of the
 * same options.
 *
 * # Safety
 * `options` must be NULL or a pointer from `paimon_cleanup_run_options_new` not yet freed.
 */
void paimon_cleanup_run_options_free(struct PaimonCleanupRunOptions *options);

/**
 * Returns the static, lower-case name of a file class as used in the keys of the CLI's JSON
 * output (`"data"`, `"changelog_data"`, `"manifest"`, `"manifest_list"`, `"index_manifest"`,
 * `"index"`, `"statistics"`, `"snapshot_meta"`, `"changelog_meta"`, `"tag_meta"`,
 * `"consumer_meta"`, `"other"`), or `"unknown"` for a value that is not a file class.
 *
 * Ownership: static; never free it. Thread-safety: any thread. Errors: none; never NULL.
 */
const char *paimon_cleanup_file_class_name(int32_t file_class);

/**
 * Returns the static, lower-case name of a report kind (`"none"`, `"expire_snapshots"`, ...),
 * or `"unknown"` for a value that is not a report kind.
 *
 * Ownership: static; never free it. Thread-safety: any thread. Errors: none; never NULL.
 */
const char *paimon_cleanup_report_kind_name(int32_t kind);

/**
 * Returns which operation produced the report, or `PAIMON_CLEANUP_REPORT_KIND_NONE` for NULL.
 *
 * Thread-safety: any thread, until the report is freed (the same holds for every
 * `paimon_cleanup_report_*` accessor).
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
PaimonCleanupReportKind paimon_cleanup_report_kind(const struct PaimonCleanupReport *report);

/**
 * Returns true when the report comes from a dry run: nothing was changed, and the counts and
 * paths describe what a real run would delete. False for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
bool paimon_cleanup_report_dry_run(const struct PaimonCleanupReport *report);

/**
 * Returns how many items the run removed (in a dry run: would remove): snapshots for
 * `EXPIRE_SNAPSHOTS`, changelogs for `EXPIRE_CHANGELOGS`, tags for `DELETE_TAG` / `EXPIRE_TAGS`,
 * consumers for `EXPIRE_CONSUMERS`, partitions for `DROP_PARTITIONS` / `EXPIRE_PARTITIONS`;
 * 0 for `REMOVE_ORPHAN_FILES` (see the file counts), `MAINTAIN` (see its steps) and NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_expired_count(const struct PaimonCleanupReport *report);

/**
 * Returns true when the report has an expired id range, i.e. when
 * `paimon_cleanup_report_first_expired_id` / `_last_expired_id` are meaningful: at least one
 * snapshot (`EXPIRE_SNAPSHOTS`) or changelog (`EXPIRE_CHANGELOGS`) expired. False otherwise and
 * for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
bool paimon_cleanup_report_has_expired_range(const struct PaimonCleanupReport *report);

/**
 * Returns the id of the first (oldest) version expired, or 0 when
 * `paimon_cleanup_report_has_expired_range` is false.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
int64_t paimon_cleanup_report_first_expired_id(const struct PaimonCleanupReport *report);

/**
 * Returns the id of the last (newest) version expired, or 0 when
 * `paimon_cleanup_report_has_expired_range` is false.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
int64_t paimon_cleanup_report_last_expired_id(const struct PaimonCleanupReport *report);

/**
 * Returns true when `paimon_cleanup_report_earliest_after_id` is meaningful: an
 * `EXPIRE_SNAPSHOTS` report of a table that had snapshots. False otherwise and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
bool paimon_cleanup_report_has_earliest_after(const struct PaimonCleanupReport *report);

/**
 * Returns the id of the earliest version left after the run (in a dry run: that would be left),
 * or 0 when `paimon_cleanup_report_has_earliest_after` is false.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
int64_t paimon_cleanup_report_earliest_after_id(const struct PaimonCleanupReport *report);

/**
 * Returns how many long-lived changelog files a snapshot expiry wrote (tables whose changelog
 * lifecycle is decoupled from snapshots, `changelog.num-retained.*`); 0 otherwise and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_changelogs_written(const struct PaimonCleanupReport *report);

/**
 * Returns how many files of class `file_class` (a `PaimonCleanupFileClass` value) the run
 * deleted (in a dry run: would delete). 0 for NULL and for an unknown class.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_files(const struct PaimonCleanupReport *report, int32_t file_class);

/**
 * Returns the total size in bytes of the files of class `file_class` the run deleted (in a dry
 * run: would delete). Sizes come from metadata where it records them, else from the store. 0 for
 * NULL and for an unknown class.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_bytes(const struct PaimonCleanupReport *report, int32_t file_class);

/**
 * Returns the number of files deleted (in a dry run: deletable) over all classes; 0 for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_total_files(const struct PaimonCleanupReport *report);

/**
 * Returns the bytes deleted (in a dry run: deletable) over all classes; 0 for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_total_bytes(const struct PaimonCleanupReport *report);

/**
 * Returns the number of deletions that failed (the files are still there; a later run retries
 * them). The operation itself still returned OK. For `MAINTAIN` the failures of every step, in
 * step order. 0 for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_failed_count(const struct PaimonCleanupReport *report);

/**
 * Returns the path of failed deletion `index` (0-based, below
 * `paimon_cleanup_report_failed_count`), relative to the table root when it lies under it, or
 * NULL when `index` is out of range or `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_failed_path(const struct PaimonCleanupReport *report,
                                              size_t index);

/**
 * Returns the error message of failed deletion `index`, or NULL when `index` is out of range or
 * `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_failed_error(const struct PaimonCleanupReport *report,
                                               size_t index);

/**
 * Returns the number of paths in the report's listing: every file the run deleted, or in a dry
 * run every file it would delete, in deletion order (for `MAINTAIN`: every step's, in step
 * order). Equals `paimon_cleanup_report_total_files` unless
 * `paimon_cleanup_report_paths_elsewhere` is true. 0 for NULL. A partition drop or expiry
 * deletes no data file (it commits a snapshot that marks them deleted; a later snapshot expiry
 * deletes them): its listing holds only the Iceberg-compatible metadata files its metadata
 * refresh replaced (class `OTHER`), on tables that keep such metadata.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_path_count(const struct PaimonCleanupReport *report);

/**
 * Returns true when the path listing is a sample, not every file: a snapshot expiry run as
 * units whose gate handed the freed data and changelog paths to the tasks
 * (`paimon_cleanup_expiry_units_gate_with_paths` with `paths_to_tasks`). The listing then holds
 * the metadata files the driver deleted and the first paths of each task, the tasks' own
 * `out_paths` hold the rest, and the counts per class and the failures stay complete. For
 * `MAINTAIN`, true when any step's is. False for NULL and for every report of a one-call run.
 *
 * A host that shows or archives the listing as "what was deleted" must say it is a sample
 * when this is true (the JSON says `"paths_elsewhere": true` under `"deletion"`).
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
bool paimon_cleanup_report_paths_elsewhere(const struct PaimonCleanupReport *report);

/**
 * Returns path `index` (0-based, below `paimon_cleanup_report_path_count`) of the listing,
 * relative to the table root when it lies under it (`f1=10/bucket-0/data-….orc`,
 * `manifest/manifest-list-…`), else the full URI (external data paths). NULL when `index` is out
 * of range or `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_path(const struct PaimonCleanupReport *report, size_t index);

/**
 * Returns the file class of path `index` of the listing. `index` must be below
 * `paimon_cleanup_report_path_count`; for an out-of-range index or a NULL report the answer is
 * `PAIMON_CLEANUP_FILE_CLASS_OTHER`.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
PaimonCleanupFileClass paimon_cleanup_report_path_class(const struct PaimonCleanupReport *report,
                                                        size_t index);

/**
 * Returns the number of directories the run removed because they were left empty (bucket and
 * partition directories; only when empty-directory cleaning is on and not in a dry run). 0 for
 * NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_dirs_removed(const struct PaimonCleanupReport *report);

/**
 * Returns the wall time of the run in milliseconds; 0 for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_elapsed_ms(const struct PaimonCleanupReport *report);

/**
 * Returns the number of names in the report: the tags deleted (`DELETE_TAG`, `EXPIRE_TAGS`), the
 * consumer ids expired (`EXPIRE_CONSUMERS`), or the partitions dropped (`DROP_PARTITIONS`,
 * `EXPIRE_PARTITIONS`) written `key=value/key2=value2` in partition key order for display, NULL
 * as `NULL` and empty, blank or otherwise ambiguous strings quoted (`p=''`, `p=' '`,
 * `p='NULL'`), one per distinct partition value (use `paimon_cleanup_report_partition_key` /
 * `_value` for exact values). In a dry run: what would be removed. 0 for other kinds and for
 * NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_name_count(const struct PaimonCleanupReport *report);

/**
 * Returns name `index` (below `paimon_cleanup_report_name_count`), or NULL when out of range or
 * `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_name(const struct PaimonCleanupReport *report, size_t index);

/**
 * Returns the number of requested items that did not exist, so nothing was done for them (the
 * tag of a `DELETE_TAG` that is not there). 0 for other kinds and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_missing_count(const struct PaimonCleanupReport *report);

/**
 * Returns missing item `index` (below `paimon_cleanup_report_missing_count`), or NULL when out of
 * range or `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_missing(const struct PaimonCleanupReport *report, size_t index);

/**
 * Returns the number of fields (partition keys) of dropped partition `index` (below
 * `paimon_cleanup_report_name_count` of a `DROP_PARTITIONS` / `EXPIRE_PARTITIONS` report); 0 when
 * out of range, for other kinds and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_partition_field_count(const struct PaimonCleanupReport *report,
                                                   size_t index);

/**
 * Returns the key of field `field` of dropped partition `index`, or NULL when either is out of
 * range or `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_partition_key(const struct PaimonCleanupReport *report,
                                                size_t index,
                                                size_t field);

/**
 * Returns the value of field `field` of dropped partition `index` as the text that, given back in
 * a `PaimonCleanupPartitionSpec`, names exactly this value: the table's default partition name
 * for NULL, a string key's value verbatim (possibly empty or blank: the NULL, `''` and `' '`
 * partitions share a directory but are reported apart), other types as in the partition
 * directory name. NULL when either index is out of range or `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_partition_value(const struct PaimonCleanupReport *report,
                                                  size_t index,
                                                  size_t field);

/**
 * Returns how many data files a partition drop or expiry marked deleted in its commit(s) (in a
 * dry run: would mark). The files themselves stay until a snapshot expiry removes the snapshots
 * that still reference them. 0 for other kinds and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_files_marked_deleted(const struct PaimonCleanupReport *report);

/**
 * Returns the rows of the files counted by `paimon_cleanup_report_files_marked_deleted`.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_rows_marked_deleted(const struct PaimonCleanupReport *report);

/**
 * Returns the bytes of the files counted by `paimon_cleanup_report_files_marked_deleted`.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_bytes_marked_deleted(const struct PaimonCleanupReport *report);

/**
 * Returns how many snapshots the run committed (partition drop / expiry: one OVERWRITE snapshot
 * per batch; none in a dry run). 0 for other kinds and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_committed_snapshot_count(const struct PaimonCleanupReport *report);

/**
 * Returns the id of committed snapshot `index` (in commit order), or 0 when out of range or
 * `report` is NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
int64_t paimon_cleanup_report_committed_snapshot_id(const struct PaimonCleanupReport *report,
                                                    size_t index);

/**
 * Returns the cut-off an orphan-file removal used (milliseconds since the Unix epoch): only files
 * modified before it were candidates. 0 for other kinds and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
int64_t paimon_cleanup_report_cutoff_ms(const struct PaimonCleanupReport *report);

/**
 * Returns how many files an orphan-file removal examined: the files in the directories it lists
 * that a snapshot, tag, branch or changelog references (whatever their age), plus the
 * unreferenced ones older than the cut-off. Each was then referenced, vetoed, kept with a
 * warning, or deleted (in a dry run: listed as deletable). 0 for other kinds and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_candidates(const struct PaimonCleanupReport *report);

/**
 * Returns how many listed files an orphan-file removal kept because a snapshot, tag, branch or
 * changelog references their location, whatever their age (it is not read). 0 for other kinds
 * and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_referenced(const struct PaimonCleanupReport *report);

/**
 * Returns how many candidates an orphan-file removal kept because the caller's veto callback
 * returned true for them. 0 for other kinds and for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
uint64_t paimon_cleanup_report_vetoed(const struct PaimonCleanupReport *report);

/**
 * Returns the number of warnings: things the run deliberately did not touch and why (for an
 * orphan-file removal: directories it could not list, branches without a schema, files kept
 * because their name is referenced at another location). For `MAINTAIN` every step's, in step
 * order. 0 for NULL.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_warning_count(const struct PaimonCleanupReport *report);

/**
 * Returns warning `index` (below `paimon_cleanup_report_warning_count`) as readable text, or NULL
 * when out of range or `report` is NULL.
 *
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_warning(const struct PaimonCleanupReport *report, size_t index);

/**
 * Returns the number of sub-reports: for `MAINTAIN`, one per step that ran, in the order they
 * ran (`EXPIRE_TAGS`, `EXPIRE_CONSUMERS`, `EXPIRE_SNAPSHOTS`, `EXPIRE_CHANGELOGS`; a step the
 * table's options do not ask for is absent). 0 for other kinds and for NULL. The parent's file
 * counts, bytes and removed directories are the sums of its steps'; its failures, paths and
 * warnings are its steps', concatenated in step order.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
size_t paimon_cleanup_report_step_count(const struct PaimonCleanupReport *report);

/**
 * Returns sub-report `index` (below `paimon_cleanup_report_step_count`), or NULL when out of
 * range or `report` is NULL. Read it with the same `paimon_cleanup_report_*` accessors.
 *
 * Ownership: borrowed from (owned by) `report`: valid until `report` is freed; never pass it to
 * `paimon_cleanup_report_free`.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const struct PaimonCleanupReport *paimon_cleanup_report_step(const struct PaimonCleanupReport *report,
                                                             size_t index);

/**
 * Returns the whole report as one JSON object, NUL-terminated UTF-8: the same document the CLI
 * prints with `--json` for the same operation (every field, including the kind-specific ones
 * that have no accessor, and the path listing). An empty string for NULL.
 *
 * Built on the first call (memory proportional to the path listing) and cached.
 * Ownership: borrowed from the report; valid until the report is freed.
 *
 * # Safety
 * `report` must be NULL or a live report.
 */
const char *paimon_cleanup_report_json(const struct PaimonCleanupReport *report);

/**
 * Frees a report and every string borrowed from it. NULL is accepted and ignored.
 *
 * Ownership: takes back ownership of `report`. Free each report exactly once.
 * Thread-safety: may be called from any thread, but not while another thread still reads the
 * report.
 *
 * # Safety
 * `report` must be NULL or a report handed out by this library and not yet freed.
 */
void paimon_cleanup_report_free(struct PaimonCleanupReport *report);

/**
 * Creates an expire config with every field unset (table options, then Paimon's defaults).
 *
 * Ownership: on success `*out` receives a new config owned by the caller, released with
 * `paimon_cleanup_expire_config_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
 * success and to a new error object on failure.
 *
 * # Safety
 * `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_new(struct PaimonCleanupExpireConfig **out,
                                                     struct PaimonCleanupError **err);

/**
 * Sets the minimum number of snapshots kept, whatever their age (`snapshot.num-retained.min`).
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `retain_min` is not in
 * 1..=2147483647 (the config is then unchanged). Whether it exceeds the maximum is checked when an operation runs.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_retain_min(struct PaimonCleanupExpireConfig *config,
                                                                int64_t retain_min,
                                                                struct PaimonCleanupError **err);

/**
 * Sets the maximum number of snapshots kept, whatever their age (`snapshot.num-retained.max`):
 * older ones expire even when they are younger than the time retained.
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `retain_max` is not in
 * 1..=2147483647. Whether it
 * is at least the minimum is checked when an operation runs (`INVALID_ARGUMENT` then).
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_retain_max(struct PaimonCleanupExpireConfig *config,
                                                                int64_t retain_max,
                                                                struct PaimonCleanupError **err);

/**
 * Sets how long snapshots are kept, in milliseconds (`snapshot.time-retained`): snapshots
 * committed less than `time_retained_ms` before the run starts are kept. 0 means no age
 * protection (only the minimum count protects).
 *
 * The cut-off can be given either as this duration or as an absolute time
 * (`paimon_cleanup_expire_config_set_older_than_ms`); the setter called last wins.
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `time_retained_ms` is
 * above 2^63-1.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_time_retained_ms(struct PaimonCleanupExpireConfig *config,
                                                                      uint64_t time_retained_ms,
                                                                      struct PaimonCleanupError **err);

/**
 * Sets an absolute cut-off instead of a duration: snapshots committed at or after
 * `older_than_ms` (milliseconds since the Unix epoch, UTC) are kept.
 *
 * The setter called last of this one and `paimon_cleanup_expire_config_set_time_retained_ms`
 * wins. A cut-off in the future is refused when the operation runs (`INVALID_ARGUMENT`), so that
 * a clock or unit mistake cannot expire everything.
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `older_than_ms` < 0.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_older_than_ms(struct PaimonCleanupExpireConfig *config,
                                                                   int64_t older_than_ms,
                                                                   struct PaimonCleanupError **err);

/**
 * Sets the maximum number of snapshots one run expires (`snapshot.expire.limit`); a later run
 * continues where this one stopped.
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `max_expires` is not in
 * 1..=2147483647.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_max_expires(struct PaimonCleanupExpireConfig *config,
                                                                 int64_t max_expires,
                                                                 struct PaimonCleanupError **err);

/**
 * Sets whether bucket and partition directories left empty by the run are removed
 * (`snapshot.clean-empty-directories`). Never above the table's data root; never in a dry run.
 *
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_clean_empty_dirs(struct PaimonCleanupExpireConfig *config,
                                                                      bool clean_empty_dirs,
                                                                      struct PaimonCleanupError **err);

/**
 * Sets dry-run mode: the run computes everything and reports what it would delete (counts and
 * the path listing) but changes nothing at all, not even hint files.
 *
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_dry_run(struct PaimonCleanupExpireConfig *config,
                                                             bool dry_run,
                                                             struct PaimonCleanupError **err);

/**
 * Sets whether the run refuses to start (`CONFLICT`, naming the tags, nothing deleted) when a
 * tag pins a snapshot that would otherwise expire. When false (the default, as in Paimon) the
 * snapshot expires and the tag keeps the files it needs.
 *
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_refuse_if_tags_pin(struct PaimonCleanupExpireConfig *config,
                                                                        bool refuse,
                                                                        struct PaimonCleanupError **err);

/**
 * Sets whether a changelog expiry removes every long-lived changelog older than the earliest
 * snapshot, whatever the retention (for a table whose changelog lifecycle was decoupled and no
 * longer is). Refused with `CONFLICT` when a changelog is not older than the earliest snapshot.
 * Ignored by snapshot expiry.
 *
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_config_set_delete_all_changelogs(struct PaimonCleanupExpireConfig *config,
                                                                           bool delete_all,
                                                                           struct PaimonCleanupError **err);

/**
 * Frees an expire config. NULL is accepted and ignored.
 *
 * Operations that already started with the config are not affected (they copied it).
 * Ownership: takes back ownership of `config`. Free each config exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with any other use of the
 * same config.
 *
 * # Safety
 * `config` must be NULL or a pointer from `paimon_cleanup_expire_config_new` not yet freed.
 */
void paimon_cleanup_expire_config_free(struct PaimonCleanupExpireConfig *config);

/**
 * Expires old snapshots of the context's branch (its `branch` option, default `main`) and
 * deletes every file only they referenced (data, changelog, manifest, manifest-list, index and
 * statistics files, then the snapshot files), in crash-safe order. A file still needed by a retained snapshot, a tag, a branch, a
 * long-lived changelog or a consumer is never deleted.
 *
 * `config`: required; unset fields take the table's options (see `PaimonCleanupExpireConfig`).
 * `run_options`: may be NULL (no progress callback, no cancellation).
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS`), owned by the caller and released with
 * `paimon_cleanup_report_free`; on failure `*out` is left untouched.
 * Thread-safety: any number of host threads may call it at once with the same executor and
 * configs; two runs on the same table at once are safe for the table but the second may find
 * files already gone (they are then not counted).
 * Errors: `NULL_POINTER` if `context`, `executor`, `config` or `out` is NULL; `INVALID_ARGUMENT`
 * for an invalid combination of settings (retain max < retain min, a cut-off in the future, a bad
 * table option) or when called from a thread running an async runtime; `NOT_FOUND` if the table
 * does not exist; `CANCELLED` when the run options' token is cancelled (before the call: nothing
 * is read or deleted; during the run: it stops at its next read or delete batch, and a read
 * stuck in I/O — a hung mount, a server that does not answer — is abandoned within about 20 ms,
 * its blocked thread, if any, left to finish on its own); `CONFLICT` when `refuse_if_tags_pin` is set and a tag pins an expiring
 * snapshot, or when the snapshot to keep is missing; `MALFORMED`, `STORAGE`, `PATH_REFUSED`,
 * `UNSUPPORTED` as their names say. Individual failed deletions are not errors: they are listed
 * in the report. `*err` (when `err` is not NULL) is set to NULL on success and to a new error
 * object on failure.
 *
 * # Safety
 * `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and `err`
 * must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_snapshots(const struct PaimonCleanupContext *context,
                                                    const struct PaimonCleanupExecutor *executor,
                                                    const struct PaimonCleanupExpireConfig *config,
                                                    const struct PaimonCleanupRunOptions *run_options,
                                                    struct PaimonCleanupReport **out,
                                                    struct PaimonCleanupError **err);

/**
 * Expires long-lived changelogs of the context's branch (its `branch` option, default `main`;
 * tables whose changelog lifecycle is decoupled from snapshots: `changelog.num-retained.*` /
 * `changelog.time-retained` above the snapshot values) and deletes the changelog files only they referenced. A file still needed by
 * a snapshot, a tag, a branch or a retained changelog is never deleted. On a table without
 * long-lived changelogs it succeeds with nothing expired.
 *
 * `config`: required; retention fields unset take `changelog.*`, then the snapshot options (see
 * `PaimonCleanupExpireConfig`); `_set_delete_all_changelogs` removes every changelog older than
 * the earliest snapshot. `run_options`: may be NULL.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CHANGELOGS`), owned by the caller and released with
 * `paimon_cleanup_report_free`; on failure `*out` is left untouched.
 * Thread-safety: as `paimon_cleanup_expire_snapshots`.
 * Errors: as `paimon_cleanup_expire_snapshots`; `CONFLICT` also when delete-all is set and a
 * changelog is not older than the earliest snapshot. `*err` (when `err` is not NULL) is set to
 * NULL on success and to a new error object on failure.
 *
 * # Safety
 * `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and `err`
 * must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_changelogs(const struct PaimonCleanupContext *context,
                                                     const struct PaimonCleanupExecutor *executor,
                                                     const struct PaimonCleanupExpireConfig *config,
                                                     const struct PaimonCleanupRunOptions *run_options,
                                                     struct PaimonCleanupReport **out,
                                                     struct PaimonCleanupError **err);

/**
 * Deletes tag `tag` of the context's branch (its `branch` option, default `main`) and every
 * file only that tag kept (data, changelog, manifest, index and statistics files of its snapshot
 * that no snapshot, other tag, branch or changelog needs). The tag file goes first, so a crash leaves only unreferenced files
 * (which orphan-file removal finds).
 *
 * A tag that does not exist is not an error: the call succeeds, deletes nothing and lists the
 * name in the report (`paimon_cleanup_report_missing`), as Paimon does.
 * `tag`: the tag name (the file is `tag/tag-<name>`), non-empty UTF-8. `dry_run`: report what
 * would be deleted, change nothing. `run_options`: may be NULL.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller (`tag` is copied). On success `*out`
 * receives a new report (`PAIMON_CLEANUP_REPORT_KIND_DELETE_TAG`; `paimon_cleanup_report_name`
 * lists the deleted tag), owned by the caller and released with `paimon_cleanup_report_free`;
 * on failure `*out` is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor`, `tag` or `out` is NULL; `INVALID_UTF8`;
 * `INVALID_ARGUMENT` for an empty or blank name or a path-like one (containing `/`, `\\`, `..` or a
 * control character; nothing is deleted); `NOT_FOUND` if the table does
 * not exist; `CANCELLED`; `MALFORMED`, `STORAGE`, `PATH_REFUSED`, `UNSUPPORTED` as their names
 * say. `*err` (when `err` is not NULL) is set to NULL on success and to a new error object on
 * failure.
 *
 * # Safety
 * `context`, `executor` and `run_options` must be NULL or live handles; `tag` must be NULL or
 * NUL-terminated; `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_delete_tag(const struct PaimonCleanupContext *context,
                                              const struct PaimonCleanupExecutor *executor,
                                              const char *tag,
                                              bool dry_run,
                                              const struct PaimonCleanupRunOptions *run_options,
                                              struct PaimonCleanupReport **out,
                                              struct PaimonCleanupError **err);

/**
 * Expires tags of the context's branch (its `branch` option, default `main`), with the files
 * only they kept (as `paimon_cleanup_delete_tag`), as Paimon Java's `expire_tags` procedure does: every tag whose
 * own retention has passed (`tagCreateTime` + `tagTimeRetained`; time expiry is enabled for the
 * call even when the table sets `tag.time-expire-enabled` to false, which only
 * `paimon_cleanup_maintain` follows), and,
 * when `older_than_ms` > 0, every tag created before `older_than_ms` (milliseconds since the
 * Unix epoch; the tag file's modification time when the tag records no creation time).
 *
 * `older_than_ms`: 0 = only tags whose retention passed; must not be negative or in the future.
 * `dry_run`: report what would be deleted, change nothing. `run_options`: may be NULL.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_TAGS`; `paimon_cleanup_report_name` lists the tags),
 * owned by the caller and released with `paimon_cleanup_report_free`; on failure `*out` is left
 * untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `INVALID_ARGUMENT` if
 * `older_than_ms` is negative or in the future; otherwise as `paimon_cleanup_delete_tag`.
 * `*err` (when `err` is not NULL) is set to NULL on success and to a new error object on
 * failure.
 *
 * # Safety
 * `context`, `executor` and `run_options` must be NULL or live handles; `out` and `err` must be
 * NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_tags(const struct PaimonCleanupContext *context,
                                               const struct PaimonCleanupExecutor *executor,
                                               int64_t older_than_ms,
                                               bool dry_run,
                                               const struct PaimonCleanupRunOptions *run_options,
                                               struct PaimonCleanupReport **out,
                                               struct PaimonCleanupError **err);

/**
 * Expires the consumers of the context's branch (its `branch` option, default `main`) that have
 * not advanced (whose consumer file was not modified) for longer than `expiration_ms`, so a dead reader stops protecting
 * snapshots from expiry. Only the consumer files are deleted.
 *
 * `expiration_ms`: 0 = the table's `consumer.expiration-time` (INVALID_ARGUMENT when the table
 * has none). `dry_run`: report what would be deleted, change nothing. `run_options`: may be NULL.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CONSUMERS`; `paimon_cleanup_report_name` lists the
 * consumer ids), owned by the caller and released with `paimon_cleanup_report_free`; on failure
 * `*out` is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `INVALID_ARGUMENT` when no
 * expiration is given and the table has none, or when `expiration_ms` is above 2^63-1; `NOT_FOUND`, `CANCELLED`, `MALFORMED`, `STORAGE`,
 * `PATH_REFUSED` as their names say. `*err` (when `err` is not NULL) is set to NULL on success
 * and to a new error object on failure.
 *
 * # Safety
 * `context`, `executor` and `run_options` must be NULL or live handles; `out` and `err` must be
 * NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_consumers(const struct PaimonCleanupContext *context,
                                                    const struct PaimonCleanupExecutor *executor,
                                                    uint64_t expiration_ms,
                                                    bool dry_run,
                                                    const struct PaimonCleanupRunOptions *run_options,
                                                    struct PaimonCleanupReport **out,
                                                    struct PaimonCleanupError **err);

/**
 * Creates a maintain config with the defaults (not a dry run).
 *
 * Ownership: on success `*out` receives a new config owned by the caller, released with
 * `paimon_cleanup_maintain_config_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
 * success and to a new error object on failure.
 *
 * # Safety
 * `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_maintain_config_new(struct PaimonCleanupMaintainConfig **out,
                                                       struct PaimonCleanupError **err);

/**
 * Sets dry-run mode: every step computes and reports what it would do, nothing is changed.
 *
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupMaintainConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_maintain_config_set_dry_run(struct PaimonCleanupMaintainConfig *config,
                                                               bool dry_run,
                                                               struct PaimonCleanupError **err);

/**
 * Frees a maintain config. NULL is accepted and ignored.
 *
 * Ownership: takes back ownership of `config`. Free each config exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with any other use of the
 * same config.
 *
 * # Safety
 * `config` must be NULL or a pointer from `paimon_cleanup_maintain_config_new` not yet freed.
 */
void paimon_cleanup_maintain_config_free(struct PaimonCleanupMaintainConfig *config);

/**
 * Runs the maintenance the table's own options ask for, in Paimon's order: tag expiry (tags
 * whose retention passed), consumer expiry (when `consumer.expiration-time` is set), snapshot
 * expiry (`snapshot.*` retention), changelog expiry (when the changelog lifecycle is decoupled).
 * The natural single call for an engine after each commit or on a schedule.
 *
 * `config`: may be NULL (the defaults: not a dry run). `run_options`: may be NULL; its progress
 * callback and cancellation token serve every step.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 * A failing step stops the run with its error; the steps before it keep their effect.
 *
 * Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_MAINTAIN`; one sub-report per step that ran, see
 * `paimon_cleanup_report_step`), owned by the caller and released with
 * `paimon_cleanup_report_free`; on failure `*out` is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; otherwise the errors of the
 * steps (see `paimon_cleanup_expire_snapshots`). `*err` (when `err` is not NULL) is set to NULL
 * on success and to a new error object on failure.
 *
 * # Safety
 * `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and
 * `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_maintain(const struct PaimonCleanupContext *context,
                                            const struct PaimonCleanupExecutor *executor,
                                            const struct PaimonCleanupMaintainConfig *config,
                                            const struct PaimonCleanupRunOptions *run_options,
                                            struct PaimonCleanupReport **out,
                                            struct PaimonCleanupError **err);

/**
 * Creates an orphan config with the defaults (cut-off now − 1 day, writers assumed running, no
 * veto, not a dry run).
 *
 * Ownership: on success `*out` receives a new config owned by the caller, released with
 * `paimon_cleanup_orphan_config_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
 * success and to a new error object on failure.
 *
 * # Safety
 * `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_new(struct PaimonCleanupOrphanConfig **out,
                                                     struct PaimonCleanupError **err);

/**
 * Sets the cut-off (milliseconds since the Unix epoch): only files last modified before it may be
 * deleted, so files of writes still in flight are never touched.
 *
 * When the run starts, a cut-off in the future is refused (`INVALID_ARGUMENT`), and so is one
 * within the last hour unless `paimon_cleanup_orphan_config_set_no_writers_running` was set.
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `older_than_ms` < 0.
 * Thread-safety: see `PaimonCleanupOrphanConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_set_older_than_ms(struct PaimonCleanupOrphanConfig *config,
                                                                   int64_t older_than_ms,
                                                                   struct PaimonCleanupError **err);

/**
 * Sets dry-run mode: the run lists, reads every reference, asks the veto and reports what it
 * would delete (counts and the path listing), but changes nothing at all.
 *
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupOrphanConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_set_dry_run(struct PaimonCleanupOrphanConfig *config,
                                                             bool dry_run,
                                                             struct PaimonCleanupError **err);

/**
 * Declares that no writer (no job, engine or other process) writes or commits to the table while
 * the run lasts, which allows a cut-off within the last hour, up to now.
 *
 * DANGER: a writer writes its data files and manifests before it commits the snapshot that
 * references them. Such files are indistinguishable from orphans; with a recent cut-off they are
 * deleted and the commit that follows publishes a snapshot whose files are gone (lost data).
 * Set this only when every writer of the table is stopped.
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupOrphanConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_set_no_writers_running(struct PaimonCleanupOrphanConfig *config,
                                                                        bool no_writers_running,
                                                                        struct PaimonCleanupError **err);

/**
 * Declares that the table's external data roots (`data-file.external-paths`) belong to this
 * table alone, so orphan removal lists and cleans them. By default (false) they are neither
 * listed nor cleaned, and the report's warnings (`paimon_cleanup_report_warning`) name each
 * with the reason.
 *
 * DANGER: Paimon writes external data files at `<root>/<partition>/bucket-N/` without the
 * table's name, so two tables configured with one root share those directories and each
 * table's live files are orphans to the other. Set this only when no other table writes under
 * any of this table's external roots.
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupOrphanConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_set_external_roots_owned(struct PaimonCleanupOrphanConfig *config,
                                                                          bool external_roots_owned,
                                                                          struct PaimonCleanupError **err);

/**
 * Sets (or, with `veto` NULL, removes) the veto callback: it is asked about every file the run
 * would delete and keeps the file by returning true. See `PaimonCleanupVetoFn` for the path form
 * and the thread rules. A run counts vetoed files in `paimon_cleanup_report_vetoed`.
 *
 * `user_data` is passed back unchanged; the library never reads, writes or frees it. It must stay
 * valid, and usable from the library's threads, until every run started with this config has
 * returned.
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupOrphanConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `veto` must be NULL or a function with the signature of
 * `PaimonCleanupVetoFn` that follows its thread rules; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_set_veto(struct PaimonCleanupOrphanConfig *config,
                                                          PaimonCleanupVetoFn veto,
                                                          void *user_data,
                                                          struct PaimonCleanupError **err);

/**
 * Sets how many directory listings the run keeps in flight; 0 (the default) uses the executor's
 * I/O concurrency. Otherwise 1..=4096.
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if out of range.
 * Thread-safety: see `PaimonCleanupOrphanConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_set_list_concurrency(struct PaimonCleanupOrphanConfig *config,
                                                                      uint32_t list_concurrency,
                                                                      struct PaimonCleanupError **err);

/**
 * Sets how many deletions the run keeps in flight; 0 (the default) uses the executor's I/O
 * concurrency. Otherwise 1..=4096. Metadata reads always use the executor's I/O concurrency.
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if out of range.
 * Thread-safety: see `PaimonCleanupOrphanConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_config_set_delete_concurrency(struct PaimonCleanupOrphanConfig *config,
                                                                        uint32_t delete_concurrency,
                                                                        struct PaimonCleanupError **err);

/**
 * Frees an orphan config. NULL is accepted and ignored. The veto's `user_data` is not touched.
 *
 * Ownership: takes back ownership of `config`. Free each config exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with any other use of the
 * same config.
 *
 * # Safety
 * `config` must be NULL or a pointer from `paimon_cleanup_orphan_config_new` not yet freed.
 */
void paimon_cleanup_orphan_config_free(struct PaimonCleanupOrphanConfig *config);

/**
 * Removes orphan files: files older than the cut-off in the table's own directories (manifest,
 * index, statistics, bucket directories of the data root and of the external data roots, temp
 * files in snapshot/changelog directories of every branch) that no snapshot, tag or long-lived
 * changelog of ANY branch references. Candidates are listed before references are read; metadata
 * that cannot be read aborts the run before anything is deleted. Bucket and partition
 * directories left empty are removed. The context may name the table's root (main branch).
 *
 * `config`: required (see `PaimonCleanupOrphanConfig`). `run_options`: may be NULL.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_REMOVE_ORPHAN_FILES`: files and bytes per class, the path listing,
 * candidates / referenced / vetoed counts, the cut-off used, warnings), owned by the caller and
 * released with `paimon_cleanup_report_free`; on failure `*out` is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor`, `config` or `out` is NULL; `INVALID_ARGUMENT`
 * for a cut-off in the future, or within the last hour without no-writers-running; `NOT_FOUND`
 * if the table does not exist; `MALFORMED` / `NOT_FOUND` / `STORAGE` when metadata a version
 * needs cannot be read (nothing deleted, the message names the file); `CANCELLED`;
 * `PATH_REFUSED`; `INTERNAL` if the veto callback could not be called. `*err` (when `err` is not
 * NULL) is set to NULL on success and to a new error object on failure.
 *
 * # Safety
 * `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and `err`
 * must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_remove_orphan_files(const struct PaimonCleanupContext *context,
                                                       const struct PaimonCleanupExecutor *executor,
                                                       const struct PaimonCleanupOrphanConfig *config,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       struct PaimonCleanupReport **out,
                                                       struct PaimonCleanupError **err);

/**
 * Returns the first byte of `buffer` (NULL for a NULL buffer; a valid pointer, possibly
 * dangling-but-aligned, for an empty one — read `paimon_cleanup_buffer_len` bytes from it).
 *
 * Ownership: borrowed from `buffer`; valid until the buffer (or the list it came from) is freed.
 * Thread-safety: any thread. Errors: none.
 *
 * # Safety
 * `buffer` must be NULL or a live buffer.
 */
const uint8_t *paimon_cleanup_buffer_data(const struct PaimonCleanupBuffer *buffer);

/**
 * Returns the number of bytes in `buffer` (0 for NULL).
 *
 * Thread-safety: any thread. Errors: none.
 *
 * # Safety
 * `buffer` must be NULL or a live buffer.
 */
size_t paimon_cleanup_buffer_len(const struct PaimonCleanupBuffer *buffer);

/**
 * Frees a buffer the library handed out. NULL is accepted and ignored. Never pass a buffer
 * borrowed from a list (`paimon_cleanup_buffer_list_get`).
 *
 * Ownership: takes back ownership of `buffer`; free each exactly once.
 * Thread-safety: any thread, but not concurrently with another use of the same buffer.
 *
 * # Safety
 * `buffer` must be NULL or a buffer returned through an out-parameter and not yet freed.
 */
void paimon_cleanup_buffer_free(struct PaimonCleanupBuffer *buffer);

/**
 * Returns the number of buffers in `list` (0 for NULL).
 *
 * Thread-safety: any thread. Errors: none.
 *
 * # Safety
 * `list` must be NULL or a live list.
 */
size_t paimon_cleanup_buffer_list_count(const struct PaimonCleanupBufferList *list);

/**
 * Returns buffer `index` of `list`, or NULL when `list` is NULL or `index` is out of range.
 *
 * Ownership: borrowed from the list; valid until the list is freed. Never free it.
 * Thread-safety: any thread. Errors: none.
 *
 * # Safety
 * `list` must be NULL or a live list.
 */
const struct PaimonCleanupBuffer *paimon_cleanup_buffer_list_get(const struct PaimonCleanupBufferList *list,
                                                                 size_t index);

/**
 * Frees a buffer list and its buffers. NULL is accepted and ignored.
 *
 * Ownership: takes back ownership of `list`; free each exactly once.
 * Thread-safety: any thread, but not concurrently with another use of the list or its buffers.
 *
 * # Safety
 * `list` must be NULL or a list returned through an out-parameter and not yet freed.
 */
void paimon_cleanup_buffer_list_free(struct PaimonCleanupBufferList *list);

/**
 * Plans an orphan-file removal as units (on the driver): checks the cut-off (the rules of
 * `paimon_cleanup_remove_orphan_files`), resolves the data roots, walks the partition
 * directories, reads every snapshot, tag and long-lived changelog of every branch and their
 * manifest lists, and returns the units — "list these directories" (a bounded group of
 * partition / bucket directories, or the metadata directories) and "read these manifests" (a
 * bounded slice of the distinct manifests and index manifests) — and the plan state.
 *
 * Execute every unit with `paimon_cleanup_orphan_unit_execute` (anywhere, any order), merge
 * the results with `paimon_cleanup_orphan_partials_merge`, then call
 * `paimon_cleanup_orphan_units_decide` with `*out_state`. See docs/c-api.md, "Orphan removal
 * as units".
 *
 * `config`: required; its veto is not used here (decide asks it), its list concurrency is used
 * here only, and its delete concurrency not at all (delete units run at the executing host's
 * executor I/O concurrency). `run_options`: may be NULL.
 * Blocks the calling thread; the work runs on `executor`.
 *
 * Ownership: on success `*out_state` receives a new buffer and `*out_units` a new list, owned
 * by the caller (free with `paimon_cleanup_buffer_free` / `paimon_cleanup_buffer_list_free`);
 * on failure both are left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor`, `config`, `out_state` or `out_units` is
 * NULL; `INVALID_ARGUMENT` for a bad cut-off; `NOT_FOUND` if the table does not exist;
 * `MALFORMED` / `NOT_FOUND` / `STORAGE` when metadata a version needs cannot be read;
 * `CANCELLED`. `*err` (when `err` is not NULL) is set to NULL on success and to a new error
 * object on failure.
 *
 * # Safety
 * Handles must be NULL or live; out-parameters and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_units_plan(const struct PaimonCleanupContext *context,
                                                     const struct PaimonCleanupExecutor *executor,
                                                     const struct PaimonCleanupOrphanConfig *config,
                                                     const struct PaimonCleanupRunOptions *run_options,
                                                     struct PaimonCleanupBuffer **out_state,
                                                     struct PaimonCleanupBufferList **out_units,
                                                     struct PaimonCleanupError **err);

/**
 * Executes one unit of orphan removal (a plan unit or a delete unit) on any host: opens the
 * table's storage from the table URI and the options the unit carries, with the host's
 * options added (they win; units never carry credentials — option keys naming secrets,
 * tokens, passwords or access keys are left out when planning — so pass them here), and
 * returns the unit's partial result.
 *
 * `unit` / `unit_len`: a unit from `paimon_cleanup_orphan_units_plan` or
 * `paimon_cleanup_orphan_units_decide`. `option_keys` / `option_values`: `option_count`
 * NUL-terminated UTF-8 strings each (both may be NULL when the count is 0). `run_options`: may
 * be NULL (its token cancels; the reads of a plan unit stop at once). The I/O concurrency is
 * the executor's. Plan units only read: a failed, cancelled or repeated one changes nothing.
 * A delete unit checks every path again (roots, kind, no symlinked directory) before its first
 * deletion; files it cannot delete are reported in its result, not as an error.
 *
 * Ownership: the caller keeps its arguments. On success `*out` receives a new buffer owned
 * by the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
 * Thread-safety: any number of host threads may call it at once, with one executor.
 * Errors: `NULL_POINTER` for a NULL `executor`, `out`, unit bytes or option array;
 * `INVALID_UTF8`; `INVALID_ARGUMENT` for bytes that are not a unit of this library's format
 * version, an empty or duplicate key; `NOT_FOUND` / `STORAGE` opening the table; `PATH_REFUSED`
 * for a delete unit naming a path outside the table's roots or of the wrong kind;
 * `CANCELLED`. A manifest that cannot be read is not an error here (it is in the result;
 * decide judges it). `*err` as usual.
 *
 * # Safety
 * `unit` must be NULL or point to `unit_len` readable bytes; each option array NULL or
 * `option_count` readable pointers to NUL-terminated strings; handles NULL or live; `out` and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_unit_execute(const struct PaimonCleanupExecutor *executor,
                                                       const uint8_t *unit,
                                                       size_t unit_len,
                                                       const char *const *option_keys,
                                                       const char *const *option_values,
                                                       size_t option_count,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       struct PaimonCleanupBuffer **out,
                                                       struct PaimonCleanupError **err);

/**
 * Merges two partial results of orphan-removal units. Associative and commutative (any
 * order and grouping give identical bytes); an empty byte string (length 0, pointer may be
 * NULL) is the neutral element.
 *
 * Ownership: the caller keeps `a` and `b`. On success `*out` receives a new buffer owned by
 * the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
 * Thread-safety: any thread; no executor needed (pure computation).
 * Errors: `NULL_POINTER` for a NULL `out` or a NULL pointer with a non-zero length;
 * `INVALID_ARGUMENT` for bytes that are not a partial result of this format version, results
 * of two different plans, or a unit's result included in both. `*err` as usual.
 *
 * # Safety
 * `a` / `b` must be NULL or point to `a_len` / `b_len` readable bytes; `out` and `err` NULL or
 * writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_partials_merge(const uint8_t *a,
                                                         size_t a_len,
                                                         const uint8_t *b,
                                                         size_t b_len,
                                                         struct PaimonCleanupBuffer **out,
                                                         struct PaimonCleanupError **err);

/**
 * Decides an orphan-file removal planned as units (on the driver), with every safety rule of
 * `paimon_cleanup_remove_orphan_files`: lists the versions again until no new one appears
 * (reading the new ones' manifests itself), fails when metadata a version still needs could
 * not be read or when a plan unit's result is missing, keeps every referenced file, every
 * file whose name is referenced at another location and every file the veto keeps, checks
 * every path (roots, kinds, no symlinked directory), and returns the decision and the delete
 * units (none for a dry run). Nothing is deleted by this call.
 *
 * `state`: `*out_state` of the plan. `merged`: every plan unit's result, merged. `config`:
 * the plan's config; its veto is asked here (the cut-off, dry run and roots are the plan's).
 *
 * Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
 * and `*out_units` a new list, owned by the caller; on failure both are left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing unit result;
 * `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a version still needs could not be read
 * (the message names the file; nothing deleted); `CONFLICT` when versions keep appearing;
 * `PATH_REFUSED`; `CANCELLED`; `INTERNAL` if the veto panicked. `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_units_decide(const struct PaimonCleanupContext *context,
                                                       const struct PaimonCleanupExecutor *executor,
                                                       const struct PaimonCleanupOrphanConfig *config,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       const uint8_t *state,
                                                       size_t state_len,
                                                       const uint8_t *merged,
                                                       size_t merged_len,
                                                       struct PaimonCleanupBuffer **out_decision,
                                                       struct PaimonCleanupBufferList **out_units,
                                                       struct PaimonCleanupError **err);

/**
 * Finishes an orphan-file removal run as units (on the driver), after every delete unit:
 * removes the data directories the deletions left empty (not in a dry run) and returns the
 * report, the same as `paimon_cleanup_remove_orphan_files` returns.
 *
 * `decision`: `*out_decision` of decide. `merged`: every delete unit's result, merged (length
 * 0 when decide returned no unit).
 *
 * Ownership: the caller keeps its arguments. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_REMOVE_ORPHAN_FILES`), released with
 * `paimon_cleanup_report_free`; on failure it is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing delete unit
 * result; `NOT_FOUND` if the table does not exist; `CANCELLED`. `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; `out` and `err` NULL
 * or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_units_finish(const struct PaimonCleanupContext *context,
                                                       const struct PaimonCleanupExecutor *executor,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       const uint8_t *decision,
                                                       size_t decision_len,
                                                       const uint8_t *merged,
                                                       size_t merged_len,
                                                       struct PaimonCleanupReport **out,
                                                       struct PaimonCleanupError **err);

/**
 * Splits a plan unit's result (or several merged) into its summary and `shards` pieces (1 to
 * 65,536) for the sharded decision: piece `i` holds the candidates and reference keys of the
 * file names of shard `i`. The engine shuffles the pieces by shard (merging each shard's
 * pieces with `paimon_cleanup_orphan_partials_merge`) and merges the summaries for the
 * driver.
 *
 * Ownership: the caller keeps `partial`. On success `*out_summary` receives a new buffer and
 * `*out_shards` a new list of `shards` buffers (buffer `i` is shard `i`), owned by the
 * caller; on failure both are left untouched.
 * Thread-safety: any thread; no executor needed (pure computation).
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for a shard count out of range, bytes that are
 * not a partial result of this format version, or a result already split. `*err` as usual.
 *
 * # Safety
 * `partial` NULL or readable for `partial_len` bytes; out-parameters and `err` NULL or
 * writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_partial_split(const uint8_t *partial,
                                                        size_t partial_len,
                                                        uint32_t shards,
                                                        struct PaimonCleanupBuffer **out_summary,
                                                        struct PaimonCleanupBufferList **out_shards,
                                                        struct PaimonCleanupError **err);

/**
 * The gate of the sharded decision (on the driver): lists the versions again until no new
 * one appears (reading the new ones' manifests itself), fails when metadata a version still
 * needs could not be read or when a plan unit's summary is missing, and returns the updated
 * state and the gate every shard decides with. Call it before the shards decide and again
 * after: `*out_decide` is true after the first call and after a later one that found a new
 * version (then every shard decides again with the new gate); false confirms the round the
 * shards decided, for `paimon_cleanup_orphan_units_conclude`. Nothing is deleted here.
 *
 * `state`: the plan's `*out_state`, or the `*out_state` of the previous gate. `summary`:
 * every plan unit's summary, merged. `shards`: the count the results were split into.
 *
 * Ownership: the caller keeps its arguments. On success `*out_state` and `*out_gate` receive
 * new buffers owned by the caller and `*out_decide` is written; on failure all are left
 * untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, a missing or doubled summary
 * or another shard count; `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a version still
 * needs could not be read (the message names the file); `CONFLICT` when versions keep
 * appearing; `CANCELLED`. `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_units_gate(const struct PaimonCleanupContext *context,
                                                     const struct PaimonCleanupExecutor *executor,
                                                     const struct PaimonCleanupRunOptions *run_options,
                                                     const uint8_t *state,
                                                     size_t state_len,
                                                     const uint8_t *summary,
                                                     size_t summary_len,
                                                     uint32_t shards,
                                                     struct PaimonCleanupBuffer **out_state,
                                                     struct PaimonCleanupBuffer **out_gate,
                                                     bool *out_decide,
                                                     struct PaimonCleanupError **err);

/**
 * Decides one shard of the sharded decision (anywhere): `piece` is every plan unit's piece
 * of shard `shard` merged (checked complete, each unit once), `gate` the round's gate. Keeps
 * every referenced file, every file whose name is referenced at another location and every
 * file the veto keeps, checks every remaining path (roots, kinds, no symlinked directory),
 * and returns the shard's report and its delete units (none for a dry run). Nothing is
 * deleted by this call.
 *
 * `config`: the plan's config; its veto is asked here (the cut-off, dry run and roots are
 * the plan's).
 *
 * Ownership: the caller keeps its arguments. On success `*out_report` receives a new buffer
 * and `*out_units` a new list, owned by the caller; on failure both are left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, another shard's piece or a
 * piece missing a unit; `PATH_REFUSED`; `CANCELLED`; `INTERNAL` if the veto panicked.
 * `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_shard_decide(const struct PaimonCleanupContext *context,
                                                       const struct PaimonCleanupExecutor *executor,
                                                       const struct PaimonCleanupOrphanConfig *config,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       const uint8_t *gate,
                                                       size_t gate_len,
                                                       uint32_t shard,
                                                       const uint8_t *piece,
                                                       size_t piece_len,
                                                       struct PaimonCleanupBuffer **out_report,
                                                       struct PaimonCleanupBufferList **out_units,
                                                       struct PaimonCleanupError **err);

/**
 * Concludes the sharded decision (on the driver): with the state of the gate that confirmed
 * the round (`*out_decide` false), every plan unit's summary merged and the round's report of
 * every shard, each exactly once (a missing, doubled or stale report is refused), returns the
 * decision for `paimon_cleanup_orphan_units_finish`.
 *
 * `reports` / `report_lens`: `count` byte strings (NULL for `count` 0).
 *
 * Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
 * owned by the caller; on failure it is left untouched.
 * Thread-safety: any thread; no executor needed (pure computation).
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, an unconfirmed round, or a
 * missing, doubled or stale shard report. `*err` as usual.
 *
 * # Safety
 * Byte pointers NULL or readable for their lengths; `reports` and `report_lens` NULL or
 * readable for `count` items; `out_decision` and `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_orphan_units_conclude(const uint8_t *state,
                                                         size_t state_len,
                                                         const uint8_t *summary,
                                                         size_t summary_len,
                                                         const uint8_t *const *reports,
                                                         const size_t *report_lens,
                                                         size_t count,
                                                         struct PaimonCleanupBuffer **out_decision,
                                                         struct PaimonCleanupError **err);

/**
 * Plans a snapshot expiry of the context's branch as units (on the driver): resolves the
 * retention (the rules of `paimon_cleanup_expire_snapshots`), picks the snapshots to expire
 * (reads only) and returns the plan state and the candidate units, each "read these delta (or
 * changelog) manifest lists and return the files they free".
 *
 * Then: execute every unit with `paimon_cleanup_expiry_unit_execute` (anywhere, any order),
 * merge the results with `paimon_cleanup_expiry_partials_merge`, call
 * `paimon_cleanup_expiry_units_protect`, execute and merge its protect units, call
 * `paimon_cleanup_expiry_units_decide`, execute and merge its delete units, and call
 * `paimon_cleanup_expiry_units_finish`. The result equals `paimon_cleanup_expire_snapshots`.
 *
 * `config`: required (as for `paimon_cleanup_expire_snapshots`). `run_options`: may be NULL.
 * Blocks the calling thread; the work runs on `executor`.
 *
 * Ownership: on success `*out_state` receives a new buffer and `*out_units` a new list, owned
 * by the caller (free with `paimon_cleanup_buffer_free` / `paimon_cleanup_buffer_list_free`);
 * on failure both are left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor`, `config`, `out_state` or `out_units` is
 * NULL; `INVALID_ARGUMENT` for bad retention values; `NOT_FOUND` if the table does not exist;
 * `CONFLICT` (tags pin expired snapshots with `_set_refuse_if_tags_pin`, or the first kept
 * snapshot is missing); `MALFORMED` / `STORAGE` reading the snapshots; `CANCELLED`. `*err`
 * (when `err` is not NULL) is set to NULL on success and to a new error object on failure.
 *
 * # Safety
 * Handles must be NULL or live; out-parameters and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_units_plan(const struct PaimonCleanupContext *context,
                                                     const struct PaimonCleanupExecutor *executor,
                                                     const struct PaimonCleanupExpireConfig *config,
                                                     const struct PaimonCleanupRunOptions *run_options,
                                                     struct PaimonCleanupBuffer **out_state,
                                                     struct PaimonCleanupBufferList **out_units,
                                                     struct PaimonCleanupError **err);

/**
 * Executes one unit of snapshot expiry (a candidate, protect or delete unit) on any host:
 * opens the table's branch from the table URI, branch and options the unit carries, with the
 * host's options added (they win; units never carry credentials — option keys naming secrets,
 * tokens, passwords or access keys are left out when planning — so pass them here), and
 * returns the unit's partial result.
 *
 * `unit` / `unit_len`: a unit from `paimon_cleanup_expiry_units_plan`, `_protect` or
 * `_decide`. `option_keys` / `option_values`: `option_count` NUL-terminated UTF-8 strings each
 * (both may be NULL when the count is 0). `run_options`: may be NULL (its token cancels; the
 * reads of a candidate or protect unit stop at once). The I/O concurrency is the executor's.
 * Candidate and protect units only read: a failed, cancelled or repeated one changes nothing.
 * A delete unit checks every path again (roots, kind, no symlinked directory) before its
 * first deletion; files it cannot delete are reported in its result, and finish then stops
 * before the metadata that names them.
 *
 * Ownership: the caller keeps its arguments. On success `*out` receives a new buffer owned by
 * the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
 * Thread-safety: any number of host threads may call it at once, with one executor.
 * Errors: `NULL_POINTER` for a NULL `executor`, `out`, unit bytes or option array;
 * `INVALID_UTF8`; `INVALID_ARGUMENT` for bytes that are not a unit of this library's format
 * version, an empty or duplicate key; `NOT_FOUND` / `STORAGE` opening the table; `MALFORMED` /
 * `NOT_FOUND` / `STORAGE` when a protect unit cannot read metadata a protector needs;
 * `PATH_REFUSED` for a delete unit naming a path outside the table's roots or of the wrong
 * kind; `CANCELLED`. `*err` as usual.
 *
 * # Safety
 * `unit` must be NULL or point to `unit_len` readable bytes; each option array NULL or
 * `option_count` readable pointers to NUL-terminated strings; handles NULL or live; `out` and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_unit_execute(const struct PaimonCleanupExecutor *executor,
                                                       const uint8_t *unit,
                                                       size_t unit_len,
                                                       const char *const *option_keys,
                                                       const char *const *option_values,
                                                       size_t option_count,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       struct PaimonCleanupBuffer **out,
                                                       struct PaimonCleanupError **err);

/**
 * `paimon_cleanup_expiry_unit_execute` for any unit, including the delete units of a gate
 * that hands the freed paths to the tasks (`paimon_cleanup_expiry_units_gate_with_paths`
 * with `paths_to_tasks`): their result holds the files and bytes deleted per class, every
 * failure (path and error) and the first 20 deleted paths, and `*out_paths` lists every path
 * the unit deleted, one buffer each (UTF-8, as the report shows paths, not NUL-terminated), in
 * the order deleted, for the task to keep where it wants. For every other unit `*out_paths`
 * is an empty list and `*out` is what `paimon_cleanup_expiry_unit_execute` returns.
 *
 * Ownership: the caller keeps its arguments. On success `*out` receives a new buffer and
 * `*out_paths` a new list, owned by the caller (`paimon_cleanup_buffer_free`,
 * `paimon_cleanup_buffer_list_free`); on failure both are left untouched.
 * Thread-safety and errors: as `paimon_cleanup_expiry_unit_execute` (`NULL_POINTER` for a
 * NULL `out_paths` too).
 *
 * # Safety
 * As `paimon_cleanup_expiry_unit_execute`; `out_paths` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_unit_execute_paths(const struct PaimonCleanupExecutor *executor,
                                                             const uint8_t *unit,
                                                             size_t unit_len,
                                                             const char *const *option_keys,
                                                             const char *const *option_values,
                                                             size_t option_count,
                                                             const struct PaimonCleanupRunOptions *run_options,
                                                             struct PaimonCleanupBuffer **out,
                                                             struct PaimonCleanupBufferList **out_paths,
                                                             struct PaimonCleanupError **err);

/**
 * Merges two partial results of snapshot-expiry units of one stage. Associative and
 * commutative (any order and grouping give identical bytes); an empty byte string (length 0,
 * pointer may be NULL) is the neutral element.
 *
 * Ownership: the caller keeps `a` and `b`. On success `*out` receives a new buffer owned by
 * the caller (free with `paimon_cleanup_buffer_free`); on failure it is left untouched.
 * Thread-safety: any thread; no executor needed (pure computation).
 * Errors: `NULL_POINTER` for a NULL `out` or a NULL pointer with a non-zero length;
 * `INVALID_ARGUMENT` for bytes that are not a partial result of this format version, results
 * of two different plans or stages, or a unit's result included in both. `*err` as usual.
 *
 * # Safety
 * `a` / `b` must be NULL or point to `a_len` / `b_len` readable bytes; `out` and `err` NULL or
 * writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_partials_merge(const uint8_t *a,
                                                         size_t a_len,
                                                         const uint8_t *b,
                                                         size_t b_len,
                                                         struct PaimonCleanupBuffer **out,
                                                         struct PaimonCleanupError **err);

/**
 * After the candidate units (on the driver): rebuilds the candidates in plan order from
 * `candidates` (every candidate unit's result, merged), reads the removed snapshots' metadata
 * and every version that protects files (retained snapshots, tags of every branch, other
 * branches, long-lived changelogs), and returns the new plan state and the protect units, each
 * "read these protectors and return which candidates they still need". Nothing is deleted.
 *
 * `state`: `*out_state` of `paimon_cleanup_expiry_units_plan`.
 *
 * Ownership: the caller keeps its arguments. On success `*out_state` receives a new buffer
 * (pass it to `_decide`) and `*out_units` a new list, owned by the caller; on failure both are
 * left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, bytes of another table or a
 * missing unit result; `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a protector needs
 * cannot be read (nothing deleted); `CANCELLED`. `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_units_protect(const struct PaimonCleanupContext *context,
                                                        const struct PaimonCleanupExecutor *executor,
                                                        const struct PaimonCleanupRunOptions *run_options,
                                                        const uint8_t *state,
                                                        size_t state_len,
                                                        const uint8_t *candidates,
                                                        size_t candidates_len,
                                                        struct PaimonCleanupBuffer **out_state,
                                                        struct PaimonCleanupBufferList **out_units,
                                                        struct PaimonCleanupError **err);

/**
 * After the protect units (on the driver): builds the deletion plan of
 * `paimon_cleanup_expire_snapshots` from the candidates and the protected keys, checks every
 * path of it (roots, kinds, no symlinked directory), and returns the decision and the delete
 * units (batches of data and changelog files; none in a dry run). Nothing is deleted.
 *
 * `state`: `*out_state` of `_protect`. `candidates`: the merged candidate results given to
 * `_protect`. `protected`: every protect unit's result, merged (length 0 when `_protect`
 * returned no unit).
 *
 * Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
 * and `*out_units` a new list, owned by the caller; on failure both are left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing result;
 * `CONFLICT` when the removed snapshots' metadata changed since `_protect`; `PATH_REFUSED`;
 * `NOT_FOUND` / `MALFORMED` / `STORAGE` reading the protectors' metadata; `CANCELLED`.
 * `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_units_decide(const struct PaimonCleanupContext *context,
                                                       const struct PaimonCleanupExecutor *executor,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       const uint8_t *state,
                                                       size_t state_len,
                                                       const uint8_t *candidates,
                                                       size_t candidates_len,
                                                       const uint8_t *protected_,
                                                       size_t protected_len,
                                                       struct PaimonCleanupBuffer **out_decision,
                                                       struct PaimonCleanupBufferList **out_units,
                                                       struct PaimonCleanupError **err);

/**
 * Finishes a snapshot expiry run as units (on the driver), after every delete unit: if a
 * delete unit could not delete a file, fails with `STORAGE` before deleting the metadata that
 * names it (a rerun finishes); otherwise removes emptied directories, deletes the manifests,
 * index files, statistics and lists, then the snapshot files, writes the `EARLIEST` hint and
 * returns the report `paimon_cleanup_expire_snapshots` returns.
 *
 * `decision`: `*out_decision` of `_decide`. `merged`: every delete unit's result, merged
 * (length 0 when `_decide` returned no unit).
 *
 * Ownership: the caller keeps its arguments. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS`), released with `paimon_cleanup_report_free`;
 * on failure it is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes or a missing delete unit
 * result; `STORAGE` when a deletion failed; `PATH_REFUSED`; `NOT_FOUND` if the table does not
 * exist; `CANCELLED`. `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; `out` and `err` NULL
 * or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_units_finish(const struct PaimonCleanupContext *context,
                                                       const struct PaimonCleanupExecutor *executor,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       const uint8_t *decision,
                                                       size_t decision_len,
                                                       const uint8_t *merged,
                                                       size_t merged_len,
                                                       struct PaimonCleanupReport **out,
                                                       struct PaimonCleanupError **err);

/**
 * Splits a candidate unit's result (or several merged) into its summary and `shards` pieces
 * (1 to 65,536) for the sharded decision: piece `i` holds the candidates whose directory is
 * in shard `i` (a file, its extra files and every candidate at the same location share one).
 * The engine shuffles the pieces by shard (merging each shard's pieces with
 * `paimon_cleanup_expiry_partials_merge`) and merges the summaries for the driver
 * (`paimon_cleanup_expiry_units_gate`).
 *
 * Ownership: the caller keeps `partial`. On success `*out_summary` receives a new buffer and
 * `*out_shards` a new list of `shards` buffers (buffer `i` is shard `i`), owned by the
 * caller; on failure both are left untouched.
 * Thread-safety: any thread; no executor needed (pure computation).
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for a shard count out of range, bytes that are
 * not a whole result of candidate units of this format version (a result already split, a
 * protect or delete unit's result). `*err` as usual.
 *
 * # Safety
 * `partial` NULL or readable for `partial_len` bytes; out-parameters and `err` NULL or
 * writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_partial_split(const uint8_t *partial,
                                                        size_t partial_len,
                                                        uint32_t shards,
                                                        struct PaimonCleanupBuffer **out_summary,
                                                        struct PaimonCleanupBufferList **out_shards,
                                                        struct PaimonCleanupError **err);

/**
 * The gate of the sharded decision (on the driver), instead of `_protect` and `_decide`:
 * with every candidate unit's summary merged (`summary`, split into `shards`), reads the
 * removed snapshots' metadata and every version that protects files, decides and checks the
 * manifests, lists, index files, statistics and snapshot files the expiry deletes, and
 * returns the decision so far (for `paimon_cleanup_expiry_units_conclude`) and the gate every
 * shard decides with (`paimon_cleanup_expiry_shard_decide`): it holds the protectors, in
 * proportion to snapshots and tags, not to files. Nothing is deleted.
 *
 * `state`: `*out_state` of `paimon_cleanup_expiry_units_plan`.
 *
 * Ownership: the caller keeps its arguments. On success `*out_decision` and `*out_gate`
 * receive new buffers owned by the caller; on failure both are left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, bytes of another table, a
 * missing or doubled summary, summaries of another shard count or a shard count out of range;
 * `PATH_REFUSED`; `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata cannot be read (nothing
 * deleted); `CANCELLED`. `*err` as usual.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_units_gate(const struct PaimonCleanupContext *context,
                                                     const struct PaimonCleanupExecutor *executor,
                                                     const struct PaimonCleanupRunOptions *run_options,
                                                     const uint8_t *state,
                                                     size_t state_len,
                                                     const uint8_t *summary,
                                                     size_t summary_len,
                                                     uint32_t shards,
                                                     struct PaimonCleanupBuffer **out_decision,
                                                     struct PaimonCleanupBuffer **out_gate,
                                                     struct PaimonCleanupError **err);

/**
 * `paimon_cleanup_expiry_units_gate`, with `paths_to_tasks` choosing where the freed data and
 * changelog paths go. `false`: exactly `_gate`. `true`: each path goes to the task that freed
 * it, and only counts come back to the driver — every shard decides with
 * `paimon_cleanup_expiry_shard_decide_paths` (in a dry run its `*out_paths` lists the paths
 * the shard would delete), every delete unit runs with
 * `paimon_cleanup_expiry_unit_execute_paths` (its `*out_paths` lists the paths it deleted;
 * `paimon_cleanup_expiry_unit_execute` refuses such a unit), and the shard reports and delete
 * results carry files and bytes per class, every failure (path and error) and the first 20
 * paths instead of every path. The report of `paimon_cleanup_expiry_units_finish` then has
 * the counts and failures of `paimon_cleanup_expire_snapshots`, but its path list holds those
 * 20 and the metadata files the driver deleted, and its JSON says `"paths_elsewhere": true`
 * (under `"deletion"`). The choice travels in the gate and the decision.
 *
 * Ownership, thread-safety and errors: as `paimon_cleanup_expiry_units_gate`.
 *
 * # Safety
 * Handles NULL or live; byte pointers NULL or readable for their lengths; out-parameters and
 * `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_units_gate_with_paths(const struct PaimonCleanupContext *context,
                                                                const struct PaimonCleanupExecutor *executor,
                                                                const struct PaimonCleanupRunOptions *run_options,
                                                                const uint8_t *state,
                                                                size_t state_len,
                                                                const uint8_t *summary,
                                                                size_t summary_len,
                                                                uint32_t shards,
                                                                bool paths_to_tasks,
                                                                struct PaimonCleanupBuffer **out_decision,
                                                                struct PaimonCleanupBuffer **out_gate,
                                                                struct PaimonCleanupError **err);

/**
 * Decides one shard of the sharded decision on any host: `piece` is every candidate unit's
 * piece of shard `shard` merged (checked complete, each unit once), `gate` the gate's bytes.
 * Opens the table from the gate with the host's options added (they win: pass the
 * credentials here), decides the shard's data and changelog files exactly as
 * `paimon_cleanup_expire_snapshots` does (reading every protector's manifests for the shard's
 * candidates), checks every one of them (roots, kinds, no symlinked directory) and returns
 * the shard's report (for `_conclude`) and its delete units (none in a dry run), executed
 * with `paimon_cleanup_expiry_unit_execute`. Nothing is deleted by this call.
 *
 * `option_keys` / `option_values`: `option_count` NUL-terminated UTF-8 strings each (both
 * may be NULL when the count is 0). `run_options`: may be NULL.
 *
 * Ownership: the caller keeps its arguments. On success `*out_report` receives a new buffer
 * and `*out_units` a new list, owned by the caller; on failure both are left untouched.
 * Thread-safety: any number of host threads may call it at once, with one executor.
 * Errors: `NULL_POINTER`; `INVALID_UTF8`; `INVALID_ARGUMENT` for foreign bytes, another
 * shard's piece, a piece missing a unit or a shard out of range; `PATH_REFUSED`;
 * `NOT_FOUND` / `MALFORMED` / `STORAGE` when metadata a protector needs cannot be read;
 * `CANCELLED`. `*err` as usual.
 *
 * # Safety
 * Byte pointers NULL or readable for their lengths; each option array NULL or `option_count`
 * readable pointers to NUL-terminated strings; handles NULL or live; out-parameters and `err`
 * NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_shard_decide(const struct PaimonCleanupExecutor *executor,
                                                       const uint8_t *gate,
                                                       size_t gate_len,
                                                       uint32_t shard,
                                                       const uint8_t *piece,
                                                       size_t piece_len,
                                                       const char *const *option_keys,
                                                       const char *const *option_values,
                                                       size_t option_count,
                                                       const struct PaimonCleanupRunOptions *run_options,
                                                       struct PaimonCleanupBuffer **out_report,
                                                       struct PaimonCleanupBufferList **out_units,
                                                       struct PaimonCleanupError **err);

/**
 * `paimon_cleanup_expiry_shard_decide`, also handing out the paths the shard frees when the
 * gate hands them to the tasks (`paimon_cleanup_expiry_units_gate_with_paths` with
 * `paths_to_tasks`): in a dry run `*out_paths` lists every path the shard would delete, one
 * buffer each (UTF-8, as the report shows paths, not NUL-terminated), in the single-process
 * order; otherwise (a real run, whose delete units hand out their paths, or another gate) it
 * is an empty list. The shard's report then holds counts and a sample, not the paths.
 *
 * Ownership: the caller keeps its arguments. On success `*out_report`, `*out_units` and
 * `*out_paths` receive new objects owned by the caller (free the lists with
 * `paimon_cleanup_buffer_list_free`); on failure all three are left untouched.
 * Thread-safety and errors: as `paimon_cleanup_expiry_shard_decide` (`NULL_POINTER` for a
 * NULL `out_paths` too).
 *
 * # Safety
 * As `paimon_cleanup_expiry_shard_decide`; `out_paths` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_shard_decide_paths(const struct PaimonCleanupExecutor *executor,
                                                             const uint8_t *gate,
                                                             size_t gate_len,
                                                             uint32_t shard,
                                                             const uint8_t *piece,
                                                             size_t piece_len,
                                                             const char *const *option_keys,
                                                             const char *const *option_values,
                                                             size_t option_count,
                                                             const struct PaimonCleanupRunOptions *run_options,
                                                             struct PaimonCleanupBuffer **out_report,
                                                             struct PaimonCleanupBufferList **out_units,
                                                             struct PaimonCleanupBufferList **out_paths,
                                                             struct PaimonCleanupError **err);

/**
 * Concludes the sharded decision (on the driver): with the decision of `_gate` and the report
 * of every shard, each exactly once (a missing, doubled or foreign report is refused),
 * returns the decision for `paimon_cleanup_expiry_units_finish`, which then takes every delete
 * unit's result, merged, and deletes the metadata in the crash-safe order.
 *
 * `reports` / `report_lens`: `count` byte strings (NULL for `count` 0).
 *
 * Ownership: the caller keeps its arguments. On success `*out_decision` receives a new buffer
 * owned by the caller; on failure it is left untouched.
 * Thread-safety: any thread; no executor needed (pure computation).
 * Errors: `NULL_POINTER`; `INVALID_ARGUMENT` for foreign bytes, a decision concluded already
 * or a missing, doubled or foreign shard report. `*err` as usual.
 *
 * # Safety
 * Byte pointers NULL or readable for their lengths; `reports` and `report_lens` NULL or
 * readable for `count` items; `out_decision` and `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expiry_units_conclude(const uint8_t *decision,
                                                         size_t decision_len,
                                                         const uint8_t *const *reports,
                                                         const size_t *report_lens,
                                                         size_t count,
                                                         struct PaimonCleanupBuffer **out_decision,
                                                         struct PaimonCleanupError **err);

/**
 * Lists the tables of the local filesystem-catalog warehouse `warehouse` (a path or a
 * `file://` URI: `<warehouse>/<db>.db/<table>/` directories holding a `schema/` directory)
 * that `pattern` names, sorted by name. `pattern` is `db.table` where either part may be or
 * hold `*` (`"db.*"`, `"*.*"`, `"db.t"`; `*` matches any run of characters), as Paimon Java's
 * procedures take a table. Read-only; lists directories on the calling thread (no executor).
 *
 * Ownership: `warehouse` and `pattern` stay owned by the caller. On success `*out` receives a
 * new list owned by the caller, released with `paimon_cleanup_table_list_free`; on failure
 * `*out` is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `warehouse`, `pattern` or `out` is NULL; `INVALID_UTF8`;
 * `INVALID_ARGUMENT` for a pattern without `.`; `UNSUPPORTED` for an object-store URI (only
 * local warehouses are listed) and for a database or table directory the pattern takes whose
 * name is not UTF-8 (never skipped unseen); `STORAGE` when a directory cannot be listed;
 * `NOT_FOUND` when no table matches. `*err` (when `err` is not NULL) is set to NULL on success and to a new error
 * object on failure.
 *
 * # Safety
 * `warehouse` and `pattern` must be NULL or NUL-terminated; `out` and `err` must be NULL or
 * writable.
 */
PaimonCleanupStatus paimon_cleanup_warehouse_list_tables(const char *warehouse,
                                                         const char *pattern,
                                                         struct PaimonCleanupTableList **out,
                                                         struct PaimonCleanupError **err);

/**
 * Returns the number of tables in `list` (0 for NULL).
 *
 * # Safety
 * `list` must be NULL or a live list.
 */
size_t paimon_cleanup_table_list_count(const struct PaimonCleanupTableList *list);

/**
 * Returns the `db.table` name of table `index` (below `paimon_cleanup_table_list_count`), or
 * NULL when out of range or `list` is NULL.
 *
 * Ownership: borrowed from the list; valid until the list is freed.
 *
 * # Safety
 * `list` must be NULL or a live list.
 */
const char *paimon_cleanup_table_list_name(const struct PaimonCleanupTableList *list, size_t index);

/**
 * Returns the location (a local path) of table `index` (below
 * `paimon_cleanup_table_list_count`), or NULL when out of range or `list` is NULL: what
 * `paimon_cleanup_context_new` takes as the table location.
 *
 * Ownership: borrowed from the list; valid until the list is freed.
 *
 * # Safety
 * `list` must be NULL or a live list.
 */
const char *paimon_cleanup_table_list_location(const struct PaimonCleanupTableList *list,
                                               size_t index);

/**
 * Releases a list from `paimon_cleanup_warehouse_list_tables`. NULL is accepted. The strings
 * borrowed from it become invalid.
 *
 * # Safety
 * `list` must be NULL or a list not freed before; it must not be used afterwards.
 */
void paimon_cleanup_table_list_free(struct PaimonCleanupTableList *list);

/**
 * Drops partitions: one OVERWRITE commit marks every live data file of every partition matching
 * one of the specs deleted, and removes the partitions' index entries. Nothing is deleted from
 * storage: the files go when a later snapshot expiry expires the snapshots that still reference
 * them (so readers of older snapshots keep working). Commits publish the snapshot atomically and
 * retry on conflict.
 *
 * `specs`: `spec_count` (at least 1) partition specs (see `PaimonCleanupPartitionSpec`).
 * `run_options`: may be NULL. The commit user is a fresh UUID and the commit identifier
 * `INT64_MAX` (a batch commit), as for Paimon's own `drop partition`.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller (the strings are copied). On success `*out`
 * receives a new report (`PAIMON_CLEANUP_REPORT_KIND_DROP_PARTITIONS`: the partitions dropped,
 * files / rows / bytes marked deleted, the snapshot committed), owned by the caller and released
 * with `paimon_cleanup_report_free`; on failure `*out` is left untouched and nothing is
 * committed.
 * Thread-safety: any number of host threads may call it at once; concurrent commits to one table
 * are serialized by the commit protocol.
 * Errors: `NULL_POINTER` if `context`, `executor`, `specs` (with `spec_count` > 0), `out`, a
 * spec's arrays or a key is NULL; `INVALID_UTF8`; `INVALID_ARGUMENT` for no spec, an empty spec,
 * an empty or repeated key, a key that is not a partition key, a value that cannot be of its
 * key's type, or an unpartitioned table; `UNSUPPORTED` for tables whose manifests are ORC or
 * Parquet; `CONFLICT` when the commit lost its race too many times; `NOT_FOUND`, `MALFORMED`,
 * `STORAGE`, `CANCELLED` as their names say. `*err` (when `err` is not NULL) is set to NULL on
 * success and to a new error object on failure.
 *
 * # Safety
 * `context`, `executor` and `run_options` must be NULL or live handles; `specs` must be NULL or
 * hold `spec_count` readable specs, each with `field_count` readable pointers in `keys` and
 * `values`, each NULL or NUL-terminated; `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_drop_partitions(const struct PaimonCleanupContext *context,
                                                   const struct PaimonCleanupExecutor *executor,
                                                   const struct PaimonCleanupPartitionSpec *specs,
                                                   size_t spec_count,
                                                   const struct PaimonCleanupRunOptions *run_options,
                                                   struct PaimonCleanupReport **out,
                                                   struct PaimonCleanupError **err);

/**
 * Previews `paimon_cleanup_drop_partitions`: reads the latest snapshot and reports what a drop
 * of `specs` would mark deleted (partitions, files, rows, bytes, index entries), committing
 * nothing. The report is of kind `PAIMON_CLEANUP_REPORT_KIND_DROP_PARTITIONS` with
 * `paimon_cleanup_report_dry_run` true and no snapshot. A writer committing between the preview
 * and a later drop can change what the drop marks.
 *
 * Arguments, ownership, thread-safety and errors: as `paimon_cleanup_drop_partitions` (the
 * same input checks, minus the commit errors `UNSUPPORTED` and `CONFLICT`).
 *
 * # Safety
 * As `paimon_cleanup_drop_partitions`.
 */
PaimonCleanupStatus paimon_cleanup_preview_drop_partitions(const struct PaimonCleanupContext *context,
                                                           const struct PaimonCleanupExecutor *executor,
                                                           const struct PaimonCleanupPartitionSpec *specs,
                                                           size_t spec_count,
                                                           const struct PaimonCleanupRunOptions *run_options,
                                                           struct PaimonCleanupReport **out,
                                                           struct PaimonCleanupError **err);

/**
 * Creates a partition-expire config with every field unset (table options, then defaults).
 *
 * Ownership: on success `*out` receives a new config owned by the caller, released with
 * `paimon_cleanup_partition_expire_config_free`; on failure `*out` is left untouched.
 * Thread-safety: may be called from any thread.
 * Errors: `NULL_POINTER` if `out` is NULL. `*err` (when `err` is not NULL) is set to NULL on
 * success and to a new error object on failure.
 *
 * # Safety
 * `out` and `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_new(struct PaimonCleanupPartitionExpireConfig **out,
                                                               struct PaimonCleanupError **err);

/**
 * Sets the expiration time in milliseconds (`partition.expiration-time`): a partition whose time
 * (by the strategy) is older than now minus this expires.
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `expiration_time_ms` is 0
 * or above 2^63-1.
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_expiration_time_ms(struct PaimonCleanupPartitionExpireConfig *config,
                                                                                  uint64_t expiration_time_ms,
                                                                                  struct PaimonCleanupError **err);

/**
 * Sets the strategy (`strategy`: a `PaimonCleanupPartitionExpireStrategy` value).
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` for an unknown value.
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_strategy(struct PaimonCleanupPartitionExpireConfig *config,
                                                                        int32_t strategy,
                                                                        struct PaimonCleanupError **err);

/**
 * Sets the timestamp formatter (`partition.timestamp-formatter`): a Java `DateTimeFormatter`
 * pattern such as `yyyyMMdd` for reading the partition time of the values-time strategy. NULL
 * restores the table's option.
 *
 * Ownership: the string is copied.
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_UTF8`. A pattern the library cannot use
 * is reported when the run starts (`INVALID_ARGUMENT`).
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `formatter` NULL or NUL-terminated; `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_timestamp_formatter(struct PaimonCleanupPartitionExpireConfig *config,
                                                                                   const char *formatter,
                                                                                   struct PaimonCleanupError **err);

/**
 * Sets the timestamp pattern (`partition.timestamp-pattern`): how the partition time string is
 * built from the keys, e.g. `$dt $hr:00:00`. NULL restores the table's option.
 *
 * Ownership: the string is copied.
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_UTF8`. A pattern the library cannot use
 * is reported when the run starts (`INVALID_ARGUMENT`).
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `pattern` NULL or NUL-terminated; `err` NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_timestamp_pattern(struct PaimonCleanupPartitionExpireConfig *config,
                                                                                 const char *pattern,
                                                                                 struct PaimonCleanupError **err);

/**
 * Sets the maximum number of partitions one run expires (`partition.expiration-max-num`).
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `max_expires` is not in
 * 1..=2147483647.
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_max_expires(struct PaimonCleanupPartitionExpireConfig *config,
                                                                           uint64_t max_expires,
                                                                           struct PaimonCleanupError **err);

/**
 * Sets how many partitions go into one commit (`partition.expiration-batch-size`); by default
 * all expired partitions are dropped in one commit.
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `batch_size` is not in
 * 1..=2147483647.
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_batch_size(struct PaimonCleanupPartitionExpireConfig *config,
                                                                          uint64_t batch_size,
                                                                          struct PaimonCleanupError **err);

/**
 * Sets dry-run mode: the run selects and reports the partitions it would drop and the files it
 * would mark deleted, and commits nothing.
 *
 * Errors: `NULL_POINTER` if `config` is NULL.
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_dry_run(struct PaimonCleanupPartitionExpireConfig *config,
                                                                       bool dry_run,
                                                                       struct PaimonCleanupError **err);

/**
 * Sets the time expiry is measured from (milliseconds since the Unix epoch) instead of the wall
 * clock, e.g. to replay a schedule. It may not be in the future, so a clock or unit mistake
 * cannot expire recent partitions.
 *
 * Errors: `NULL_POINTER` if `config` is NULL; `INVALID_ARGUMENT` if `now_ms` is negative or
 * later than the wall clock.
 * Thread-safety: see `PaimonCleanupPartitionExpireConfig`.
 *
 * # Safety
 * `config` must be NULL or live; `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_now_ms(struct PaimonCleanupPartitionExpireConfig *config,
                                                                      int64_t now_ms,
                                                                      struct PaimonCleanupError **err);

/**
 * Frees a partition-expire config. NULL is accepted and ignored.
 *
 * Ownership: takes back ownership of `config`. Free each config exactly once.
 * Thread-safety: may be called from any thread, but not concurrently with any other use of the
 * same config.
 *
 * # Safety
 * `config` must be NULL or a pointer from `paimon_cleanup_partition_expire_config_new` not yet
 * freed.
 */
void paimon_cleanup_partition_expire_config_free(struct PaimonCleanupPartitionExpireConfig *config);

/**
 * Expires partitions: finds the partitions older than the expiration time (by the values in the
 * partition or by their last update) and drops them as `paimon_cleanup_drop_partitions` does
 * (OVERWRITE commits marking their files deleted; the files go with a later snapshot expiry).
 *
 * `config`: may be NULL (every setting from the table's options; `partition.expiration-time`
 * must then be set). `run_options`: may be NULL.
 * Blocks the calling thread until done; the work runs on `executor` with its I/O concurrency.
 *
 * Ownership: all arguments stay owned by the caller. On success `*out` receives a new report
 * (`PAIMON_CLEANUP_REPORT_KIND_EXPIRE_PARTITIONS`: the partitions, files / rows / bytes marked
 * deleted, the snapshots committed), owned by the caller and released with
 * `paimon_cleanup_report_free`; on failure `*out` is left untouched.
 * Thread-safety: any number of host threads may call it at once.
 * Errors: `NULL_POINTER` if `context`, `executor` or `out` is NULL; `INVALID_ARGUMENT` when no
 * expiration time is set anywhere, for an unknown strategy or formatter, or an unpartitioned
 * table; otherwise as `paimon_cleanup_drop_partitions`. `*err` (when `err` is not NULL) is set to
 * NULL on success and to a new error object on failure.
 *
 * # Safety
 * `context`, `executor`, `config` and `run_options` must be NULL or live handles; `out` and
 * `err` must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_expire_partitions(const struct PaimonCleanupContext *context,
                                                     const struct PaimonCleanupExecutor *executor,
                                                     const struct PaimonCleanupPartitionExpireConfig *config,
                                                     const struct PaimonCleanupRunOptions *run_options,
                                                     struct PaimonCleanupReport **out,
                                                     struct PaimonCleanupError **err);

/**
 * Parses an `older_than` cut-off as Paimon Java's procedures take it (`expire_snapshots`,
 * `remove_orphan_files`) and the CLI's `--older-than`, into milliseconds since the Unix epoch,
 * for `paimon_cleanup_orphan_config_set_older_than_ms` and
 * `paimon_cleanup_expire_config_set_older_than_ms`.
 *
 * `text` is a timestamp (`"2024-01-01 12:00:00"`, optional fraction; `T` accepted between
 * date and time; local time zone of the process unless it ends with `Z` or an offset such as
 * `+02:00`), or a Paimon duration counted back from `now_ms` (`"1 d"`, `"30 min"`, `"12h"`).
 * A bare number is refused (it could be a duration or an epoch time), and so is a cut-off
 * after `now_ms`. `now_ms` is the caller's "now" in epoch milliseconds (usually the current
 * time); only durations use it, and the future check.
 *
 * Ownership: `text` is borrowed for the call; `*out_ms` is written only on success.
 * Thread-safety: may be called from any thread at any time; it touches no shared state.
 * Errors: `NULL_POINTER` if `text` or `out_ms` is NULL; `INVALID_UTF8` if `text` is not UTF-8;
 * `INVALID_ARGUMENT` if it is empty, a bare number, neither a timestamp nor a duration, an
 * invalid date, or after `now_ms`; `now_ms` < 0 is `INVALID_ARGUMENT`.
 *
 * # Safety
 * `text` must be NULL or a NUL-terminated string; `out_ms` must be NULL or writable; `err`
 * must be NULL or writable.
 */
PaimonCleanupStatus paimon_cleanup_parse_older_than(const char *text,
                                                    int64_t now_ms,
                                                    int64_t *out_ms,
                                                    struct PaimonCleanupError **err);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* PAIMON_CLEANUP_H */
