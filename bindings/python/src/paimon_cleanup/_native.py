"""Loading of the native library and the ctypes signatures of the C ABI.

The signatures are written below as C prototypes in the header's own spelling
(``include/paimon_cleanup.h``) and turned into ctypes declarations at import time; the test
``tests/test_abi.py`` checks every one of them against the header, so a drift in the C ABI fails
the tests instead of corrupting memory.

ctypes releases the GIL for the duration of every foreign call (``ctypes.CDLL``), and
re-acquires it around Python callbacks that the library calls from its own worker threads.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

#: The C ABI version this package was written for (``PAIMON_CLEANUP_ABI_VERSION``).
ABI_VERSION = 1

#: Environment variable naming a library file to load instead of the bundled one.
LIBRARY_ENV = "PAIMON_CLEANUP_LIBRARY"


class TableSummary(ctypes.Structure):
    """``PaimonCleanupTableSummary`` (64 bytes)."""

    _fields_ = [
        ("has_snapshots", ctypes.c_bool),
        ("earliest_snapshot_id", ctypes.c_int64),
        ("latest_snapshot_id", ctypes.c_int64),
        ("snapshot_count", ctypes.c_uint64),
        ("tag_count", ctypes.c_uint64),
        ("branch_count", ctypes.c_uint64),
        ("live_file_count", ctypes.c_uint64),
        ("live_file_bytes", ctypes.c_uint64),
    ]


class PartitionSpec(ctypes.Structure):
    """``PaimonCleanupPartitionSpec``: parallel key / value arrays."""

    _fields_ = [
        ("keys", ctypes.POINTER(ctypes.c_char_p)),
        ("values", ctypes.POINTER(ctypes.c_char_p)),
        ("field_count", ctypes.c_size_t),
    ]


ProgressFn = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64
)
LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_char_p)
VetoFn = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_char_p)

# Every function this package calls, as the header declares it.
PROTOTYPES = """
const char *paimon_cleanup_version(void);
uint32_t paimon_cleanup_abi_version(void);
const char *paimon_cleanup_status_name(int32_t status);
PaimonCleanupStatus paimon_cleanup_parse_older_than(const char *text, int64_t now_ms, int64_t *out_ms, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_error_status(const struct PaimonCleanupError *error);
const char *paimon_cleanup_error_message(const struct PaimonCleanupError *error);
void paimon_cleanup_error_free(struct PaimonCleanupError *error);
PaimonCleanupStatus paimon_cleanup_executor_new(uint32_t worker_threads, struct PaimonCleanupExecutor **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_executor_set_io_concurrency(struct PaimonCleanupExecutor *executor, uint32_t io_concurrency, struct PaimonCleanupError **err);
uint32_t paimon_cleanup_executor_worker_threads(const struct PaimonCleanupExecutor *executor);
uint32_t paimon_cleanup_executor_io_concurrency(const struct PaimonCleanupExecutor *executor);
void paimon_cleanup_executor_free(struct PaimonCleanupExecutor *executor);
PaimonCleanupStatus paimon_cleanup_context_new(const char *table_uri, const char *const *option_keys, const char *const *option_values, size_t option_count, struct PaimonCleanupContext **out, struct PaimonCleanupError **err);
void paimon_cleanup_context_free(struct PaimonCleanupContext *context);
PaimonCleanupStatus paimon_cleanup_table_summary(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, struct PaimonCleanupTableSummary *out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_warehouse_list_tables(const char *warehouse, const char *pattern, struct PaimonCleanupTableList **out, struct PaimonCleanupError **err);
size_t paimon_cleanup_table_list_count(const struct PaimonCleanupTableList *list);
const char *paimon_cleanup_table_list_name(const struct PaimonCleanupTableList *list, size_t index);
const char *paimon_cleanup_table_list_location(const struct PaimonCleanupTableList *list, size_t index);
void paimon_cleanup_table_list_free(struct PaimonCleanupTableList *list);
PaimonCleanupStatus paimon_cleanup_cancel_token_new(struct PaimonCleanupCancelToken **out, struct PaimonCleanupError **err);
void paimon_cleanup_cancel_token_cancel(const struct PaimonCleanupCancelToken *token);
bool paimon_cleanup_cancel_token_is_cancelled(const struct PaimonCleanupCancelToken *token);
void paimon_cleanup_cancel_token_free(struct PaimonCleanupCancelToken *token);
PaimonCleanupStatus paimon_cleanup_run_options_new(struct PaimonCleanupRunOptions **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_run_options_set_progress(struct PaimonCleanupRunOptions *options, PaimonCleanupProgressFn callback, void *user_data, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_run_options_set_cancel_token(struct PaimonCleanupRunOptions *options, const struct PaimonCleanupCancelToken *token, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_run_options_set_log(struct PaimonCleanupRunOptions *options, PaimonCleanupLogFn callback, int32_t min_level, void *user_data, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_run_options_set_max_memory(struct PaimonCleanupRunOptions *options, uint64_t max_memory_bytes, struct PaimonCleanupError **err);
void paimon_cleanup_run_options_free(struct PaimonCleanupRunOptions *options);
const char *paimon_cleanup_file_class_name(int32_t file_class);
const char *paimon_cleanup_report_kind_name(int32_t kind);
PaimonCleanupReportKind paimon_cleanup_report_kind(const struct PaimonCleanupReport *report);
bool paimon_cleanup_report_dry_run(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_expired_count(const struct PaimonCleanupReport *report);
bool paimon_cleanup_report_has_expired_range(const struct PaimonCleanupReport *report);
int64_t paimon_cleanup_report_first_expired_id(const struct PaimonCleanupReport *report);
int64_t paimon_cleanup_report_last_expired_id(const struct PaimonCleanupReport *report);
bool paimon_cleanup_report_has_earliest_after(const struct PaimonCleanupReport *report);
int64_t paimon_cleanup_report_earliest_after_id(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_changelogs_written(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_files(const struct PaimonCleanupReport *report, int32_t file_class);
uint64_t paimon_cleanup_report_bytes(const struct PaimonCleanupReport *report, int32_t file_class);
uint64_t paimon_cleanup_report_total_files(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_total_bytes(const struct PaimonCleanupReport *report);
size_t paimon_cleanup_report_failed_count(const struct PaimonCleanupReport *report);
const char *paimon_cleanup_report_failed_path(const struct PaimonCleanupReport *report, size_t index);
const char *paimon_cleanup_report_failed_error(const struct PaimonCleanupReport *report, size_t index);
size_t paimon_cleanup_report_path_count(const struct PaimonCleanupReport *report);
bool paimon_cleanup_report_paths_elsewhere(const struct PaimonCleanupReport *report);
const char *paimon_cleanup_report_path(const struct PaimonCleanupReport *report, size_t index);
PaimonCleanupFileClass paimon_cleanup_report_path_class(const struct PaimonCleanupReport *report, size_t index);
uint64_t paimon_cleanup_report_dirs_removed(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_elapsed_ms(const struct PaimonCleanupReport *report);
size_t paimon_cleanup_report_name_count(const struct PaimonCleanupReport *report);
const char *paimon_cleanup_report_name(const struct PaimonCleanupReport *report, size_t index);
size_t paimon_cleanup_report_missing_count(const struct PaimonCleanupReport *report);
const char *paimon_cleanup_report_missing(const struct PaimonCleanupReport *report, size_t index);
size_t paimon_cleanup_report_partition_field_count(const struct PaimonCleanupReport *report, size_t index);
const char *paimon_cleanup_report_partition_key(const struct PaimonCleanupReport *report, size_t index, size_t field);
const char *paimon_cleanup_report_partition_value(const struct PaimonCleanupReport *report, size_t index, size_t field);
uint64_t paimon_cleanup_report_files_marked_deleted(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_rows_marked_deleted(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_bytes_marked_deleted(const struct PaimonCleanupReport *report);
size_t paimon_cleanup_report_committed_snapshot_count(const struct PaimonCleanupReport *report);
int64_t paimon_cleanup_report_committed_snapshot_id(const struct PaimonCleanupReport *report, size_t index);
int64_t paimon_cleanup_report_cutoff_ms(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_candidates(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_referenced(const struct PaimonCleanupReport *report);
uint64_t paimon_cleanup_report_vetoed(const struct PaimonCleanupReport *report);
size_t paimon_cleanup_report_warning_count(const struct PaimonCleanupReport *report);
const char *paimon_cleanup_report_warning(const struct PaimonCleanupReport *report, size_t index);
size_t paimon_cleanup_report_step_count(const struct PaimonCleanupReport *report);
const struct PaimonCleanupReport *paimon_cleanup_report_step(const struct PaimonCleanupReport *report, size_t index);
const char *paimon_cleanup_report_json(const struct PaimonCleanupReport *report);
void paimon_cleanup_report_free(struct PaimonCleanupReport *report);
PaimonCleanupStatus paimon_cleanup_expire_config_new(struct PaimonCleanupExpireConfig **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_retain_min(struct PaimonCleanupExpireConfig *config, int64_t retain_min, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_retain_max(struct PaimonCleanupExpireConfig *config, int64_t retain_max, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_time_retained_ms(struct PaimonCleanupExpireConfig *config, uint64_t time_retained_ms, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_older_than_ms(struct PaimonCleanupExpireConfig *config, int64_t older_than_ms, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_max_expires(struct PaimonCleanupExpireConfig *config, int64_t max_expires, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_clean_empty_dirs(struct PaimonCleanupExpireConfig *config, bool clean_empty_dirs, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_dry_run(struct PaimonCleanupExpireConfig *config, bool dry_run, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_refuse_if_tags_pin(struct PaimonCleanupExpireConfig *config, bool refuse, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_config_set_delete_all_changelogs(struct PaimonCleanupExpireConfig *config, bool delete_all, struct PaimonCleanupError **err);
void paimon_cleanup_expire_config_free(struct PaimonCleanupExpireConfig *config);
PaimonCleanupStatus paimon_cleanup_expire_snapshots(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupExpireConfig *config, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_changelogs(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupExpireConfig *config, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_delete_tag(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const char *tag, bool dry_run, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_tags(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, int64_t older_than_ms, bool dry_run, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expire_consumers(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, uint64_t expiration_ms, bool dry_run, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_maintain_config_new(struct PaimonCleanupMaintainConfig **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_maintain_config_set_dry_run(struct PaimonCleanupMaintainConfig *config, bool dry_run, struct PaimonCleanupError **err);
void paimon_cleanup_maintain_config_free(struct PaimonCleanupMaintainConfig *config);
PaimonCleanupStatus paimon_cleanup_maintain(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupMaintainConfig *config, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_new(struct PaimonCleanupOrphanConfig **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_set_older_than_ms(struct PaimonCleanupOrphanConfig *config, int64_t older_than_ms, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_set_dry_run(struct PaimonCleanupOrphanConfig *config, bool dry_run, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_set_no_writers_running(struct PaimonCleanupOrphanConfig *config, bool no_writers_running, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_set_external_roots_owned(struct PaimonCleanupOrphanConfig *config, bool external_roots_owned, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_set_veto(struct PaimonCleanupOrphanConfig *config, PaimonCleanupVetoFn veto, void *user_data, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_set_list_concurrency(struct PaimonCleanupOrphanConfig *config, uint32_t list_concurrency, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_config_set_delete_concurrency(struct PaimonCleanupOrphanConfig *config, uint32_t delete_concurrency, struct PaimonCleanupError **err);
void paimon_cleanup_orphan_config_free(struct PaimonCleanupOrphanConfig *config);
PaimonCleanupStatus paimon_cleanup_remove_orphan_files(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupOrphanConfig *config, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_drop_partitions(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupPartitionSpec *specs, size_t spec_count, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_preview_drop_partitions(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupPartitionSpec *specs, size_t spec_count, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_new(struct PaimonCleanupPartitionExpireConfig **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_expiration_time_ms(struct PaimonCleanupPartitionExpireConfig *config, uint64_t expiration_time_ms, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_strategy(struct PaimonCleanupPartitionExpireConfig *config, int32_t strategy, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_timestamp_formatter(struct PaimonCleanupPartitionExpireConfig *config, const char *formatter, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_timestamp_pattern(struct PaimonCleanupPartitionExpireConfig *config, const char *pattern, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_max_expires(struct PaimonCleanupPartitionExpireConfig *config, uint64_t max_expires, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_batch_size(struct PaimonCleanupPartitionExpireConfig *config, uint64_t batch_size, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_dry_run(struct PaimonCleanupPartitionExpireConfig *config, bool dry_run, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_partition_expire_config_set_now_ms(struct PaimonCleanupPartitionExpireConfig *config, int64_t now_ms, struct PaimonCleanupError **err);
void paimon_cleanup_partition_expire_config_free(struct PaimonCleanupPartitionExpireConfig *config);
PaimonCleanupStatus paimon_cleanup_expire_partitions(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupPartitionExpireConfig *config, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
const uint8_t *paimon_cleanup_buffer_data(const struct PaimonCleanupBuffer *buffer);
size_t paimon_cleanup_buffer_len(const struct PaimonCleanupBuffer *buffer);
void paimon_cleanup_buffer_free(struct PaimonCleanupBuffer *buffer);
size_t paimon_cleanup_buffer_list_count(const struct PaimonCleanupBufferList *list);
const struct PaimonCleanupBuffer *paimon_cleanup_buffer_list_get(const struct PaimonCleanupBufferList *list, size_t index);
void paimon_cleanup_buffer_list_free(struct PaimonCleanupBufferList *list);
PaimonCleanupStatus paimon_cleanup_expiry_units_plan(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupExpireConfig *config, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupBuffer **out_state, struct PaimonCleanupBufferList **out_units, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_unit_execute(const struct PaimonCleanupExecutor *executor, const uint8_t *unit, size_t unit_len, const char *const *option_keys, const char *const *option_values, size_t option_count, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupBuffer **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_unit_execute_paths(const struct PaimonCleanupExecutor *executor, const uint8_t *unit, size_t unit_len, const char *const *option_keys, const char *const *option_values, size_t option_count, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupBuffer **out, struct PaimonCleanupBufferList **out_paths, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_partials_merge(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len, struct PaimonCleanupBuffer **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_units_protect(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupRunOptions *run_options, const uint8_t *state, size_t state_len, const uint8_t *candidates, size_t candidates_len, struct PaimonCleanupBuffer **out_state, struct PaimonCleanupBufferList **out_units, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_units_decide(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupRunOptions *run_options, const uint8_t *state, size_t state_len, const uint8_t *candidates, size_t candidates_len, const uint8_t *protected_, size_t protected_len, struct PaimonCleanupBuffer **out_decision, struct PaimonCleanupBufferList **out_units, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_units_finish(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupRunOptions *run_options, const uint8_t *decision, size_t decision_len, const uint8_t *merged, size_t merged_len, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_partial_split(const uint8_t *partial, size_t partial_len, uint32_t shards, struct PaimonCleanupBuffer **out_summary, struct PaimonCleanupBufferList **out_shards, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_units_gate_with_paths(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupRunOptions *run_options, const uint8_t *state, size_t state_len, const uint8_t *summary, size_t summary_len, uint32_t shards, bool paths_to_tasks, struct PaimonCleanupBuffer **out_decision, struct PaimonCleanupBuffer **out_gate, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_shard_decide_paths(const struct PaimonCleanupExecutor *executor, const uint8_t *gate, size_t gate_len, uint32_t shard, const uint8_t *piece, size_t piece_len, const char *const *option_keys, const char *const *option_values, size_t option_count, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupBuffer **out_report, struct PaimonCleanupBufferList **out_units, struct PaimonCleanupBufferList **out_paths, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_expiry_units_conclude(const uint8_t *decision, size_t decision_len, const uint8_t *const *reports, const size_t *report_lens, size_t count, struct PaimonCleanupBuffer **out_decision, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_units_plan(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupOrphanConfig *config, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupBuffer **out_state, struct PaimonCleanupBufferList **out_units, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_unit_execute(const struct PaimonCleanupExecutor *executor, const uint8_t *unit, size_t unit_len, const char *const *option_keys, const char *const *option_values, size_t option_count, const struct PaimonCleanupRunOptions *run_options, struct PaimonCleanupBuffer **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_partials_merge(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len, struct PaimonCleanupBuffer **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_units_decide(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupOrphanConfig *config, const struct PaimonCleanupRunOptions *run_options, const uint8_t *state, size_t state_len, const uint8_t *merged, size_t merged_len, struct PaimonCleanupBuffer **out_decision, struct PaimonCleanupBufferList **out_units, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_units_finish(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupRunOptions *run_options, const uint8_t *decision, size_t decision_len, const uint8_t *merged, size_t merged_len, struct PaimonCleanupReport **out, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_partial_split(const uint8_t *partial, size_t partial_len, uint32_t shards, struct PaimonCleanupBuffer **out_summary, struct PaimonCleanupBufferList **out_shards, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_units_gate(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupRunOptions *run_options, const uint8_t *state, size_t state_len, const uint8_t *summary, size_t summary_len, uint32_t shards, struct PaimonCleanupBuffer **out_state, struct PaimonCleanupBuffer **out_gate, bool *out_decide, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_shard_decide(const struct PaimonCleanupContext *context, const struct PaimonCleanupExecutor *executor, const struct PaimonCleanupOrphanConfig *config, const struct PaimonCleanupRunOptions *run_options, const uint8_t *gate, size_t gate_len, uint32_t shard, const uint8_t *piece, size_t piece_len, struct PaimonCleanupBuffer **out_report, struct PaimonCleanupBufferList **out_units, struct PaimonCleanupError **err);
PaimonCleanupStatus paimon_cleanup_orphan_units_conclude(const uint8_t *state, size_t state_len, const uint8_t *summary, size_t summary_len, const uint8_t *const *reports, const size_t *report_lens, size_t count, struct PaimonCleanupBuffer **out_decision, struct PaimonCleanupError **err);
"""

_PROTOTYPE = re.compile(
    r"^\s*(?P<ret>[\w\s\*]+?)\s*\b(?P<name>paimon_cleanup_\w+)\s*\((?P<args>.*)\)\s*$", re.S
)
_OPAQUE = {
    "PaimonCleanupError",
    "PaimonCleanupExecutor",
    "PaimonCleanupContext",
    "PaimonCleanupCancelToken",
    "PaimonCleanupRunOptions",
    "PaimonCleanupReport",
    "PaimonCleanupExpireConfig",
    "PaimonCleanupMaintainConfig",
    "PaimonCleanupOrphanConfig",
    "PaimonCleanupPartitionExpireConfig",
    "PaimonCleanupTableList",
    "PaimonCleanupBuffer",
    "PaimonCleanupBufferList",
}
_SCALARS = {
    "void": None,
    "bool": ctypes.c_bool,
    "uint8_t": ctypes.c_uint8,
    "int32_t": ctypes.c_int32,
    "uint32_t": ctypes.c_uint32,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
    # enums crossing the boundary as int32_t
    "PaimonCleanupStatus": ctypes.c_int32,
    "PaimonCleanupReportKind": ctypes.c_int32,
    "PaimonCleanupFileClass": ctypes.c_int32,
    "PaimonCleanupProgressFn": ProgressFn,
    "PaimonCleanupLogFn": LogFn,
    "PaimonCleanupVetoFn": VetoFn,
}


def normalize_type(c_type: str) -> str:
    """A C type without qualifiers and with `*` as separate tokens: ``struct X *`` -> ``X *``."""
    text = c_type.replace("*", " * ")
    tokens = [t for t in text.split() if t not in ("const", "struct")]
    return " ".join(tokens)


def parse_prototypes(text: str) -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """``{name: (return type, (argument types...))}`` of C prototypes, types normalized."""
    result = {}
    for statement in text.split(";"):
        if not statement.strip():
            continue
        m = _PROTOTYPE.match(statement)
        if not m:
            raise ValueError(f"not a prototype: {statement.strip()!r}")
        args = []
        for arg in m.group("args").split(","):
            arg = arg.strip()
            if arg == "void":
                continue
            # drop the parameter name (the last identifier)
            arg = re.sub(r"\b\w+\s*$", "", arg).strip()
            args.append(normalize_type(arg))
        result[m.group("name")] = (normalize_type(m.group("ret")), tuple(args))
    return result


def _ctype(c_type: str):
    if c_type in _SCALARS:
        return _SCALARS[c_type]
    base, stars = c_type.replace(" *", "").strip(), c_type.count("*")
    if base == "char" and stars == 1:
        return ctypes.c_char_p
    if base == "char" and stars == 2:
        return ctypes.POINTER(ctypes.c_char_p)
    if base in _OPAQUE or base == "void":
        return ctypes.c_void_p if stars == 1 else ctypes.POINTER(ctypes.c_void_p)
    if stars == 1 and base in _SCALARS:
        return ctypes.POINTER(_SCALARS[base])
    if stars == 2 and base == "uint8_t":  # arrays of byte strings (the units' shard reports)
        return ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8))
    if base == "PaimonCleanupTableSummary" and stars == 1:
        return ctypes.POINTER(TableSummary)
    if base == "PaimonCleanupPartitionSpec" and stars == 1:
        return ctypes.POINTER(PartitionSpec)
    raise TypeError(f"no ctypes mapping for C type {c_type!r}")


def _library_path() -> Path:
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return Path(override)
    here = Path(__file__).resolve().parent
    if sys.platform == "darwin":
        name = "libpaimon_cleanup.dylib"
    elif sys.platform == "win32":
        name = "paimon_cleanup.dll"
    else:
        name = "libpaimon_cleanup.so"
    return here / name


def _load():
    path = _library_path()
    if not path.is_file():
        raise ImportError(
            f"paimon_cleanup: native library not found at {path} (the wheel bundles it; "
            f"set {LIBRARY_ENV} to use another copy)"
        )
    lib = ctypes.CDLL(str(path))
    for name, (ret, args) in parse_prototypes(PROTOTYPES).items():
        fn = getattr(lib, name)
        fn.restype = _ctype(ret)
        fn.argtypes = [_ctype(a) for a in args]
    abi = lib.paimon_cleanup_abi_version()
    if abi != ABI_VERSION:
        raise ImportError(
            f"paimon_cleanup: {path} has C ABI version {abi}, this package needs {ABI_VERSION}"
        )
    return lib, path


lib, library_path = _load()


def text(value: Optional[bytes]) -> Optional[str]:
    """A borrowed C string copied into a Python ``str`` (None for NULL)."""
    return None if value is None else value.decode("utf-8", errors="replace")


def cstr(value: str, what: str) -> bytes:
    """A Python string as a NUL-terminated UTF-8 argument; a NUL inside is refused."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{what} contains a NUL character")
    return value.encode("utf-8")


def _int_range(c_type) -> Optional[tuple]:
    """The values a C integer type holds, or None for a type that is not an integer."""
    if c_type is ctypes.c_bool or c_type not in _SCALARS.values():
        return None
    try:
        bits = 8 * ctypes.sizeof(c_type)
    except TypeError:
        return None
    if not issubclass(c_type, ctypes._SimpleCData) or c_type._type_ not in "bBhHiIlLqQnN":
        return None
    signed = c_type(-1).value == -1
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def check_int_args(fn: Callable, args: tuple) -> None:
    """Refuses a Python ``int`` outside the range of the C parameter it is passed as: ctypes
    would silently keep its low bits (``2**32 + 1`` threads would become 1)."""
    from .errors import InvalidArgument  # a cycle at import time otherwise

    for i, (c_type, value) in enumerate(zip(getattr(fn, "argtypes", None) or (), args)):
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        bounds = _int_range(c_type)
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            raise InvalidArgument(
                f"{getattr(fn, '__name__', 'call')}: argument {i} = {value} is out of range "
                f"({bounds[0]}..={bounds[1]})"
            )


def call(fn: Callable, *args) -> None:
    """Calls a fallible C function with ``args`` plus the error out-parameter; raises the
    exception class of its status on failure. An ``int`` out of its C type's range is refused
    with :class:`InvalidArgument` before the call."""
    from .errors import error_from_status  # a cycle at import time otherwise

    check_int_args(fn, args)
    err = ctypes.c_void_p()
    status = fn(*args, ctypes.byref(err))
    try:
        if status != 0:
            message = text(lib.paimon_cleanup_error_message(err)) if err.value else None
            raise error_from_status(status, message or f"{fn.__name__} failed")
    finally:
        if err.value:
            lib.paimon_cleanup_error_free(err)
