/*
 * paimon_cleanup.hpp - header-only C++17 wrapper of the paimon-cleanup C API.
 * Licensed under the Apache License, Version 2.0.
 *
 * Everything here is inline code over paimon_cleanup.h; link the same library
 * (CMake: PaimonCleanup::paimon_cleanup or PaimonCleanup::paimon_cleanup_shared).
 *
 *   #include <paimon_cleanup.hpp>
 *   namespace pc = paimon_cleanup;
 *
 *   pc::Executor exec(4);                                   // one per process, shared
 *   pc::Context table("s3://bucket/wh/db.db/t", {{"s3.region", "eu-west-1"}});
 *   pc::TableSummary s = table.summary(exec);
 *
 *   pc::ExpireConfig cfg;
 *   cfg.retain_min(10).time_retained(std::chrono::hours(24));
 *   pc::CancelToken cancel;                                 // cancel.cancel() from any thread
 *   pc::RunOptions run;
 *   run.on_progress([](const pc::Progress &p) { std::cerr << p.phase << " " << p.done << "\n"; })
 *      .cancel_token(cancel);
 *   pc::Report r = table.expire_snapshots(exec, cfg, run);  // throws pc::Error on failure
 *
 *   pc::Result<pc::Report> res = table.try_expire_snapshots(exec, cfg);  // never throws Error
 *   if (!res) std::cerr << res.status_name() << ": " << res.message() << "\n";
 *
 * Ownership: every class that owns a native handle (Executor, Context, ExpireConfig, Report) is
 * move-only and frees its handle in its destructor; a moved-from object is empty (get() returns
 * nullptr) and may only be destroyed or assigned to. CancelToken and RunOptions are ordinary
 * values: copies of a CancelToken share one cancellation flag (like std::stop_source).
 *
 * Errors: the throwing methods throw paimon_cleanup::Error (a std::runtime_error carrying the
 * Status and the library's message); the try_ methods return Result<T> instead and only throw
 * std::bad_alloc. An exception thrown by a progress callback cancels the run that called it and
 * is rethrown by the throwing method once the run has returned (the try_ methods report it as
 * Status::Cancelled with the exception's what() in the message).
 *
 * Snapshot expiry as units (for engines that schedule the work themselves): the free functions of
 * paimon_cleanup::expiry_units (plan, execute, merge, protect, decide, finish; sharded: split,
 * gate, decide_shard, conclude), with units and partial results as paimon_cleanup::Bytes.
 *
 * Threads: the rules of paimon_cleanup.h apply. Executor and Context are thread-safe; one Report
 * may be read from any thread. A progress callback runs on the calling thread or on one of the
 * executor's worker threads; calls of one operation never overlap, calls of concurrent operations
 * sharing one RunOptions may. CancelToken::cancel() may be called from any thread, including a
 * progress callback. A log callback (RunOptions::on_log) receives only the events of the runs
 * made with those options, on the same threads, never after the run returned.
 */
#ifndef PAIMON_CLEANUP_HPP
#define PAIMON_CLEANUP_HPP

#include "paimon_cleanup.h"

#if !defined(__cplusplus) || (__cplusplus < 201703L && (!defined(_MSVC_LANG) || _MSVC_LANG < 201703L))
#error "paimon_cleanup.hpp needs C++17 (use paimon_cleanup.h from C or older C++)"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paimon_cleanup {

// ---------------------------------------------------------------------------------------------
// Enumerations

/** Status of a call; the same numbers as PaimonCleanupStatus. Unknown values may appear when the
 *  library is newer than this header: treat them as errors. */
enum class Status : int32_t {
    Ok = PAIMON_CLEANUP_STATUS_OK,
    InvalidArgument = PAIMON_CLEANUP_STATUS_INVALID_ARGUMENT,
    NotFound = PAIMON_CLEANUP_STATUS_NOT_FOUND,
    Malformed = PAIMON_CLEANUP_STATUS_MALFORMED,
    Unsupported = PAIMON_CLEANUP_STATUS_UNSUPPORTED,
    Storage = PAIMON_CLEANUP_STATUS_STORAGE,
    PathRefused = PAIMON_CLEANUP_STATUS_PATH_REFUSED,
    Cancelled = PAIMON_CLEANUP_STATUS_CANCELLED,
    Conflict = PAIMON_CLEANUP_STATUS_CONFLICT,
    Internal = PAIMON_CLEANUP_STATUS_INTERNAL,
    NullPointer = PAIMON_CLEANUP_STATUS_NULL_POINTER,
    InvalidUtf8 = PAIMON_CLEANUP_STATUS_INVALID_UTF8,
    Panic = PAIMON_CLEANUP_STATUS_PANIC,
    /** The run needed more memory than RunOptions::max_memory; nothing was changed. */
    MemoryLimit = PAIMON_CLEANUP_STATUS_MEMORY_LIMIT,
};

/** Kind of file a report counts; the same numbers as PaimonCleanupFileClass. */
enum class FileClass : int32_t {
    Data = PAIMON_CLEANUP_FILE_CLASS_DATA,
    ChangelogData = PAIMON_CLEANUP_FILE_CLASS_CHANGELOG_DATA,
    Manifest = PAIMON_CLEANUP_FILE_CLASS_MANIFEST,
    ManifestList = PAIMON_CLEANUP_FILE_CLASS_MANIFEST_LIST,
    IndexManifest = PAIMON_CLEANUP_FILE_CLASS_INDEX_MANIFEST,
    Index = PAIMON_CLEANUP_FILE_CLASS_INDEX,
    Statistics = PAIMON_CLEANUP_FILE_CLASS_STATISTICS,
    SnapshotMeta = PAIMON_CLEANUP_FILE_CLASS_SNAPSHOT_META,
    ChangelogMeta = PAIMON_CLEANUP_FILE_CLASS_CHANGELOG_META,
    TagMeta = PAIMON_CLEANUP_FILE_CLASS_TAG_META,
    ConsumerMeta = PAIMON_CLEANUP_FILE_CLASS_CONSUMER_META,
    Other = PAIMON_CLEANUP_FILE_CLASS_OTHER,
};

/** Number of FileClass values this header knows (0 .. kFileClassCount - 1). */
inline constexpr int32_t kFileClassCount = PAIMON_CLEANUP_FILE_CLASS_COUNT;

/** Which operation produced a report; the same numbers as PaimonCleanupReportKind. */
enum class ReportKind : int32_t {
    None = PAIMON_CLEANUP_REPORT_KIND_NONE,
    ExpireSnapshots = PAIMON_CLEANUP_REPORT_KIND_EXPIRE_SNAPSHOTS,
    ExpireChangelogs = PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CHANGELOGS,
    DeleteTag = PAIMON_CLEANUP_REPORT_KIND_DELETE_TAG,
    ExpireTags = PAIMON_CLEANUP_REPORT_KIND_EXPIRE_TAGS,
    ExpireConsumers = PAIMON_CLEANUP_REPORT_KIND_EXPIRE_CONSUMERS,
    RemoveOrphanFiles = PAIMON_CLEANUP_REPORT_KIND_REMOVE_ORPHAN_FILES,
    DropPartitions = PAIMON_CLEANUP_REPORT_KIND_DROP_PARTITIONS,
    ExpirePartitions = PAIMON_CLEANUP_REPORT_KIND_EXPIRE_PARTITIONS,
    Maintain = PAIMON_CLEANUP_REPORT_KIND_MAINTAIN,
};

/** How a partition expiry decides that a partition expired (partition.expiration-strategy). */
enum class PartitionExpireStrategy : int32_t {
    /** The time in the partition values (Paimon's default). */
    ValuesTime = 0,
    /** The last time a file was added to the partition. */
    UpdateTime = 1,
};

/** "ok", "not_found", ... ("unknown" for a value the library does not know). Static string. */
inline const char *status_name(Status status) noexcept {
    return paimon_cleanup_status_name(static_cast<int32_t>(status));
}

/** "data", "manifest_list", ... ("unknown" for a value the library does not know). */
inline const char *file_class_name(FileClass file_class) noexcept {
    return paimon_cleanup_file_class_name(static_cast<int32_t>(file_class));
}

/** "expire_snapshots", ... ("unknown" for a value the library does not know). */
inline const char *report_kind_name(ReportKind kind) noexcept {
    return paimon_cleanup_report_kind_name(static_cast<int32_t>(kind));
}

/** Version of the loaded library, e.g. "0.1.0". */
inline const char *version() noexcept { return paimon_cleanup_version(); }

/** True when the loaded library implements the ABI this header was compiled against. */
inline bool abi_compatible() noexcept {
    return paimon_cleanup_abi_version() == PAIMON_CLEANUP_ABI_VERSION;
}

// ---------------------------------------------------------------------------------------------
// Errors

/** A failed call: the library's status code and message. what() is "<status name>: <message>". */
class Error : public std::runtime_error {
public:
    Error(Status status, std::string message)
        : std::runtime_error(std::string(status_name(status)) + ": " + message),
          status_(status),
          message_(std::move(message)) {}

    /** The status code (never Status::Ok). */
    Status status() const noexcept { return status_; }
    /** The library's message without the status prefix. */
    const std::string &message() const noexcept { return message_; }

private:
    Status status_;
    std::string message_;
};

/**
 * The outcome of a try_ call: a value, or a status and a message. Converting to bool tells
 * whether it holds a value; value() throws Error when it does not.
 */
template <class T>
class [[nodiscard]] Result {
public:
    /** A successful result holding `value`. */
    static Result success(T value) {
        Result r;
        r.value_.emplace(std::move(value));
        return r;
    }
    /** A failed result; `status` must not be Status::Ok. */
    static Result failure(Status status, std::string message) {
        Result r;
        r.status_ = status;
        r.message_ = std::move(message);
        return r;
    }

    bool ok() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
    /** Status::Ok on success. */
    Status status() const noexcept { return status_; }
    const char *status_name() const noexcept { return paimon_cleanup::status_name(status_); }
    /** Empty on success. */
    const std::string &message() const noexcept { return message_; }

    /** The value; throws Error when the call failed. */
    T &value() & {
        throw_if_failed();
        return *value_;
    }
    const T &value() const & {
        throw_if_failed();
        return *value_;
    }
    T &&value() && {
        throw_if_failed();
        return std::move(*value_);
    }
    /** The failure as an exception object (to throw or to store); only when !ok(). */
    Error error() const { return Error(status_, message_); }

private:
    Result() = default;
    void throw_if_failed() const {
        if (!value_) throw error();
    }

    Status status_ = Status::Ok;
    std::string message_;
    std::optional<T> value_;
};

/** Result of a try_ call that returns nothing. */
template <>
class [[nodiscard]] Result<void> {
public:
    static Result success() { return Result(); }
    static Result failure(Status status, std::string message) {
        Result r;
        r.status_ = status;
        r.message_ = std::move(message);
        return r;
    }
    bool ok() const noexcept { return status_ == Status::Ok; }
    explicit operator bool() const noexcept { return ok(); }
    Status status() const noexcept { return status_; }
    const char *status_name() const noexcept { return paimon_cleanup::status_name(status_); }
    const std::string &message() const noexcept { return message_; }
    /** Throws Error when the call failed. */
    void value() const {
        if (!ok()) throw error();
    }
    Error error() const { return Error(status_, message_); }

private:
    Result() = default;
    Status status_ = Status::Ok;
    std::string message_;
};

namespace detail {

/** Owns a PaimonCleanupError out-parameter for one call. */
class ErrorSlot {
public:
    ErrorSlot() = default;
    ErrorSlot(const ErrorSlot &) = delete;
    ErrorSlot &operator=(const ErrorSlot &) = delete;
    ~ErrorSlot() { paimon_cleanup_error_free(err_); }

    PaimonCleanupError **out() noexcept {
        paimon_cleanup_error_free(err_);
        err_ = nullptr;
        return &err_;
    }
    /** The message of the error (or a generic text when the library gave none). */
    std::string message(PaimonCleanupStatus status) const {
        const char *m = paimon_cleanup_error_message(err_);
        if (m != nullptr && m[0] != '\0') return m;
        return std::string("call failed with status ") +
               paimon_cleanup_status_name(static_cast<int32_t>(status));
    }

private:
    PaimonCleanupError *err_ = nullptr;
};

/** Runs `call(PaimonCleanupError **)`, returning Result<void>. */
template <class F>
Result<void> try_call(F &&call) {
    ErrorSlot err;
    PaimonCleanupStatus status = call(err.out());
    if (status == PAIMON_CLEANUP_STATUS_OK) return Result<void>::success();
    return Result<void>::failure(static_cast<Status>(status), err.message(status));
}

/** Runs `call(PaimonCleanupError **)` and throws Error when it fails. */
template <class F>
void check(F &&call) {
    try_call(std::forward<F>(call)).value();
}

template <class T, void (*Free)(T *)>
struct Deleter {
    void operator()(T *p) const noexcept { Free(p); }
};

template <class T, void (*Free)(T *)>
using Owned = std::unique_ptr<T, Deleter<T, Free>>;

/** Shared state of a CancelToken: the flag plus the native tokens of the runs watching it. */
struct CancelState {
    std::mutex mutex;
    std::atomic<bool> cancelled{false};
    std::vector<const PaimonCleanupCancelToken *> runs;

    void cancel() noexcept {
        std::lock_guard<std::mutex> lock(mutex);
        cancelled.store(true);
        for (const PaimonCleanupCancelToken *t : runs) paimon_cleanup_cancel_token_cancel(t);
    }
    void attach(const PaimonCleanupCancelToken *t) {
        std::lock_guard<std::mutex> lock(mutex);
        runs.push_back(t);
        if (cancelled.load()) paimon_cleanup_cancel_token_cancel(t);
    }
    void detach(const PaimonCleanupCancelToken *t) noexcept {
        std::lock_guard<std::mutex> lock(mutex);
        runs.erase(std::remove(runs.begin(), runs.end(), t), runs.end());
    }
};

class RunCall;

}  // namespace detail

/** Parses an `older_than` cut-off as Paimon Java's procedures and the CLI's `--older-than` take
 *  it: a timestamp ("2024-01-01 12:00:00", local time zone unless it ends with `Z` or an
 *  offset) or a duration counted back from `now` ("1 d", "30 min"). Throws Error
 *  (InvalidArgument) for a bare number, an invalid date or a cut-off after `now`. The result
 *  goes to ExpireConfig::older_than or OrphanConfig::older_than. */
inline std::chrono::system_clock::time_point parse_older_than(
    const std::string &text,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
    int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    int64_t ms = 0;
    detail::check([&](PaimonCleanupError **err) {
        return paimon_cleanup_parse_older_than(text.c_str(), now_ms, &ms, err);
    });
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::milliseconds(ms)));
}

// ---------------------------------------------------------------------------------------------
// Executor

/**
 * An executor: the library's worker threads and I/O concurrency. A process normally creates one
 * and shares it between threads and tables. Move-only; the destructor joins the worker threads,
 * so destroy it only after every call using it has returned, and never from a progress callback.
 */
class Executor {
public:
    /** Creates an executor with `worker_threads` threads (0 = one per CPU). Throws Error. */
    explicit Executor(uint32_t worker_threads = 0) : Executor(create(worker_threads).value()) {}

    /** Non-throwing constructor. */
    static Result<Executor> create(uint32_t worker_threads = 0) {
        PaimonCleanupExecutor *raw = nullptr;
        Result<void> r = detail::try_call([&](PaimonCleanupError **err) {
            return paimon_cleanup_executor_new(worker_threads, &raw, err);
        });
        if (!r) return Result<Executor>::failure(r.status(), r.message());
        return Result<Executor>::success(Executor(Handle(raw)));
    }

    /** Storage requests kept in flight by operations started afterwards (0 = automatic:
     *  8 on a local file system, 64 on object stores). Throws Error when out of range. */
    void set_io_concurrency(uint32_t io_concurrency) {
        check_live();
        detail::check([&](PaimonCleanupError **err) {
            return paimon_cleanup_executor_set_io_concurrency(handle_.get(), io_concurrency, err);
        });
    }
    /** The resolved worker thread count. */
    uint32_t worker_threads() const noexcept {
        return paimon_cleanup_executor_worker_threads(handle_.get());
    }
    /** The configured I/O concurrency (0 = automatic). */
    uint32_t io_concurrency() const noexcept {
        return paimon_cleanup_executor_io_concurrency(handle_.get());
    }

    /** The native handle (still owned by this object); nullptr after a move. */
    const PaimonCleanupExecutor *get() const noexcept { return handle_.get(); }
    PaimonCleanupExecutor *get() noexcept { return handle_.get(); }

private:
    using Handle = detail::Owned<PaimonCleanupExecutor, paimon_cleanup_executor_free>;
    explicit Executor(Handle h) noexcept : handle_(std::move(h)) {}
    void check_live() const {
        if (!handle_) throw Error(Status::NullPointer, "use of a moved-from Executor");
    }
    Handle handle_;
};

// ---------------------------------------------------------------------------------------------
// Cancellation and progress

/**
 * A cancellation flag shared by its copies (like std::stop_source). cancel() stops every running
 * operation whose RunOptions carry this token at its next check (they fail with
 * Status::Cancelled) and makes later operations fail at once, before they read anything.
 * Thread-safe; cancel() may be called from a progress callback.
 */
class CancelToken {
public:
    CancelToken() : state_(std::make_shared<detail::CancelState>()) {}

    /** Requests cancellation; calling it again has no further effect. */
    void cancel() const noexcept { state_->cancel(); }
    /** True once cancel() has been called on this token or a copy of it. */
    bool is_cancelled() const noexcept { return state_->cancelled.load(); }

private:
    friend class detail::RunCall;
    std::shared_ptr<detail::CancelState> state_;
};

/** One progress report of a running operation. */
struct Progress {
    /** Current step, e.g. "data files"; valid only during the callback (copy it to keep it). */
    std::string_view phase;
    /** Items of the step processed so far. */
    uint64_t done;
    /** Items of the step in all (0 = unknown). */
    uint64_t total;
    /** Bytes deleted (in a dry run: deletable) so far in the whole run. */
    uint64_t bytes;
};

/** Progress callback type. Must return quickly and must not call a blocking operation of this
 *  library; it may call CancelToken::cancel(). An exception it throws cancels the run. */
using ProgressCallback = std::function<void(const Progress &)>;

/** Severity of a log event (the C PaimonCleanupLogLevel numbers). */
enum class LogLevel : int32_t {
    Error = PAIMON_CLEANUP_LOG_LEVEL_ERROR,
    Warn = PAIMON_CLEANUP_LOG_LEVEL_WARN,
    Info = PAIMON_CLEANUP_LOG_LEVEL_INFO,
    Debug = PAIMON_CLEANUP_LOG_LEVEL_DEBUG,
    Trace = PAIMON_CLEANUP_LOG_LEVEL_TRACE,
};

/** One log event of a running operation. */
struct LogEvent {
    LogLevel level;
    /** Where it comes from (a Rust module path); valid only during the callback. */
    std::string_view target;
    /** The text, then ` key=value` fields; valid only during the callback. */
    std::string_view message;
};

/** Log callback type. Called on library threads, never after the operation returned; calls of
 *  one operation never overlap. Must return quickly and must not call this library (except
 *  CancelToken::cancel()). An exception it throws is swallowed (the event is dropped). */
using LogCallback = std::function<void(const LogEvent &)>;

/**
 * Options of one long operation: an optional progress callback, an optional cancellation token,
 * an optional log callback (off by default; only the events of the operations run with these
 * options reach it) and an optional memory bound. A plain value: an operation copies what it needs when it starts, so the
 * options may be changed or destroyed while it runs.
 */
class RunOptions {
public:
    RunOptions() = default;

    /** Sets (or, with an empty function, removes) the progress callback. */
    RunOptions &on_progress(ProgressCallback callback) {
        progress_ = std::move(callback);
        return *this;
    }
    /** Attaches a cancellation token (a copy sharing the caller's flag). */
    RunOptions &cancel_token(const CancelToken &token) {
        cancel_ = token;
        return *this;
    }
    /** Detaches the cancellation token. */
    RunOptions &no_cancel_token() noexcept {
        cancel_.reset();
        return *this;
    }
    /** Sets (or, with an empty function, removes) the log callback, which receives the events at
     *  `min_level` or more severe. */
    RunOptions &on_log(LogCallback callback, LogLevel min_level = LogLevel::Info) {
        log_ = std::move(callback);
        log_level_ = min_level;
        return *this;
    }
    /** Sets (or, with 0, removes) the memory bound in bytes: an operation whose plan needs more
     *  fails with Status::InvalidArgument while planning, before it deletes or commits anything
     *  (see paimon_cleanup_run_options_set_max_memory). No bound by default. */
    RunOptions &max_memory(uint64_t bytes) noexcept {
        max_memory_ = bytes;
        return *this;
    }

    const ProgressCallback &progress() const noexcept { return progress_; }
    const std::optional<CancelToken> &token() const noexcept { return cancel_; }
    const LogCallback &log() const noexcept { return log_; }
    LogLevel log_level() const noexcept { return log_level_; }
    /** The memory bound in bytes; 0 when there is none. */
    uint64_t max_memory() const noexcept { return max_memory_; }

private:
    ProgressCallback progress_;
    std::optional<CancelToken> cancel_;
    LogCallback log_;
    LogLevel log_level_ = LogLevel::Info;
    uint64_t max_memory_ = 0;
};

namespace detail {

/**
 * The native run options of one operation call. Each call gets its own native cancellation
 * token, attached to the caller's CancelToken for the duration of the call, so that a progress
 * callback that throws can stop its own run without cancelling other runs sharing the token.
 */
class RunCall {
public:
    explicit RunCall(const RunOptions *options) {
        if (options == nullptr || (!options->progress() && !options->token() && !options->log() &&
                                   options->max_memory() == 0))
            return;
        progress_ = options->progress();
        log_ = options->log();
        PaimonCleanupCancelToken *token = nullptr;
        check([&](PaimonCleanupError **err) { return paimon_cleanup_cancel_token_new(&token, err); });
        token_.reset(token);
        PaimonCleanupRunOptions *opts = nullptr;
        check([&](PaimonCleanupError **err) { return paimon_cleanup_run_options_new(&opts, err); });
        options_.reset(opts);
        check([&](PaimonCleanupError **err) {
            return paimon_cleanup_run_options_set_cancel_token(options_.get(), token_.get(), err);
        });
        if (progress_) {
            check([&](PaimonCleanupError **err) {
                return paimon_cleanup_run_options_set_progress(options_.get(), &RunCall::trampoline,
                                                               this, err);
            });
        }
        if (log_) {
            check([&](PaimonCleanupError **err) {
                return paimon_cleanup_run_options_set_log(options_.get(), &RunCall::log_trampoline,
                                                          static_cast<int32_t>(options->log_level()),
                                                          this, err);
            });
        }
        if (options->max_memory() != 0) {
            check([&](PaimonCleanupError **err) {
                return paimon_cleanup_run_options_set_max_memory(options_.get(),
                                                                 options->max_memory(), err);
            });
        }
        if (options->token()) {
            options->token()->state_->attach(token_.get());
            shared_ = options->token()->state_;  // only once attached: the destructor detaches
        }
    }
    RunCall(const RunCall &) = delete;
    RunCall &operator=(const RunCall &) = delete;
    ~RunCall() {
        if (shared_) shared_->detach(token_.get());
    }

    /** The native run options (nullptr when the caller set nothing). */
    const PaimonCleanupRunOptions *get() const noexcept { return options_.get(); }
    /** The exception a progress callback threw, if any. */
    std::exception_ptr callback_error() const noexcept { return callback_error_; }
    /** what() of that exception, for the try_ methods. */
    std::string callback_error_message() const {
        try {
            std::rethrow_exception(callback_error_);
        } catch (const std::exception &e) {
            return std::string("progress callback threw: ") + e.what();
        } catch (...) {
            return "progress callback threw a non-std exception";
        }
    }

private:
    static void trampoline(void *user_data, const char *phase, uint64_t done, uint64_t total,
                           uint64_t bytes) noexcept {
        RunCall *self = static_cast<RunCall *>(user_data);
        if (self->callback_error_) return;  // the run is stopping; stay quiet
        try {
            self->progress_(Progress{phase != nullptr ? std::string_view(phase) : std::string_view(),
                                     done, total, bytes});
        } catch (...) {
            self->callback_error_ = std::current_exception();
            paimon_cleanup_cancel_token_cancel(self->token_.get());
        }
    }

    static void log_trampoline(void *user_data, int32_t level, const char *target,
                               const char *message) noexcept {
        RunCall *self = static_cast<RunCall *>(user_data);
        try {
            self->log_(LogEvent{static_cast<LogLevel>(level),
                                target != nullptr ? std::string_view(target) : std::string_view(),
                                message != nullptr ? std::string_view(message) : std::string_view()});
        } catch (...) {
            // A log sink must not stop the run: the event is dropped.
        }
    }

    ProgressCallback progress_;
    LogCallback log_;
    Owned<PaimonCleanupCancelToken, paimon_cleanup_cancel_token_free> token_;
    Owned<PaimonCleanupRunOptions, paimon_cleanup_run_options_free> options_;
    std::shared_ptr<CancelState> shared_;
    std::exception_ptr callback_error_;
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Reports

/** A file a run deleted (in a dry run: would delete). */
struct DeletedPath {
    /** Relative to the table root when under it, else the full URI. */
    std::string path;
    FileClass file_class;
};

/** A deletion that failed (the file is still there; a later run retries it). */
struct FailedDeletion {
    std::string path;
    std::string error;
};

/** A dropped partition: its (key, value) fields; a value is the text that names it again in a
 *  PartitionSpec (the default partition name for NULL, strings verbatim, possibly empty or
 *  blank; other types as in the partition directory name). */
using PartitionValues = std::vector<std::pair<std::string, std::string>>;

/**
 * Read access to a report (every operation shares this type; accessors that do not apply to
 * kind() return 0 / false / empty). Does not own the report: a ReportView is valid as long as
 * the Report it came from (Report::steps() hands out views of the sub-reports).
 */
class ReportView {
public:
    explicit ReportView(const PaimonCleanupReport *raw = nullptr) noexcept : r_(raw) {}

    ReportKind kind() const noexcept {
        return static_cast<ReportKind>(paimon_cleanup_report_kind(r_));
    }
    /** "expire_snapshots", "remove_orphan_files", ... */
    const char *kind_name() const noexcept {
        return paimon_cleanup_report_kind_name(paimon_cleanup_report_kind(r_));
    }
    /** True when nothing was changed and the report describes what a real run would do. */
    bool dry_run() const noexcept { return paimon_cleanup_report_dry_run(r_); }
    /** Items removed: snapshots, changelogs, tags, consumers or partitions by kind. */
    uint64_t expired_count() const noexcept { return paimon_cleanup_report_expired_count(r_); }
    /** First and last expired snapshot / changelog id, when at least one expired. */
    std::optional<std::pair<int64_t, int64_t>> expired_range() const noexcept {
        if (!paimon_cleanup_report_has_expired_range(r_)) return std::nullopt;
        return std::make_pair(paimon_cleanup_report_first_expired_id(r_),
                              paimon_cleanup_report_last_expired_id(r_));
    }
    /** Earliest snapshot left by a snapshot expiry, when the table had snapshots. */
    std::optional<int64_t> earliest_after() const noexcept {
        if (!paimon_cleanup_report_has_earliest_after(r_)) return std::nullopt;
        return paimon_cleanup_report_earliest_after_id(r_);
    }
    /** Long-lived changelog files written by a snapshot expiry. */
    uint64_t changelogs_written() const noexcept {
        return paimon_cleanup_report_changelogs_written(r_);
    }
    uint64_t files(FileClass c) const noexcept {
        return paimon_cleanup_report_files(r_, static_cast<int32_t>(c));
    }
    uint64_t bytes(FileClass c) const noexcept {
        return paimon_cleanup_report_bytes(r_, static_cast<int32_t>(c));
    }
    /** Files per class name ("data", "manifest", ...), non-zero classes only. */
    std::map<std::string, uint64_t> files_by_class() const { return by_class(false); }
    /** Bytes per class name, for the classes with at least one file. */
    std::map<std::string, uint64_t> bytes_by_class() const { return by_class(true); }
    uint64_t total_files() const noexcept { return paimon_cleanup_report_total_files(r_); }
    uint64_t total_bytes() const noexcept { return paimon_cleanup_report_total_bytes(r_); }
    /** Directories removed because they were left empty. */
    uint64_t dirs_removed() const noexcept { return paimon_cleanup_report_dirs_removed(r_); }
    std::chrono::milliseconds elapsed() const noexcept {
        return std::chrono::milliseconds(paimon_cleanup_report_elapsed_ms(r_));
    }
    /**
     * True when paths() is a sample, not every file: a snapshot expiry as units whose gate handed
     * the freed data and changelog paths to the tasks (each task's paths came back with it). The
     * counts and failures stay complete.
     */
    bool paths_elsewhere() const noexcept { return paimon_cleanup_report_paths_elsewhere(r_); }
    /** Every file deleted (dry run: deletable), in deletion order; a sample when paths_elsewhere(). */
    std::vector<DeletedPath> paths() const {
        std::vector<DeletedPath> out;
        size_t n = paimon_cleanup_report_path_count(r_);
        out.reserve(n);
        for (size_t i = 0; i < n; i++)
            out.push_back(DeletedPath{str(paimon_cleanup_report_path(r_, i)),
                                      static_cast<FileClass>(paimon_cleanup_report_path_class(r_, i))});
        return out;
    }
    size_t failed_count() const noexcept { return paimon_cleanup_report_failed_count(r_); }
    std::vector<FailedDeletion> failures() const {
        std::vector<FailedDeletion> out;
        size_t n = failed_count();
        out.reserve(n);
        for (size_t i = 0; i < n; i++)
            out.push_back(FailedDeletion{str(paimon_cleanup_report_failed_path(r_, i)),
                                         str(paimon_cleanup_report_failed_error(r_, i))});
        return out;
    }
    /** Tags deleted, consumer ids expired, or partitions dropped (`k=v/k2=v2`). */
    std::vector<std::string> names() const {
        return list(paimon_cleanup_report_name_count(r_), paimon_cleanup_report_name);
    }
    /** Requested items that did not exist (the tag of a delete_tag that is not there). */
    std::vector<std::string> missing() const {
        return list(paimon_cleanup_report_missing_count(r_), paimon_cleanup_report_missing);
    }
    /** Partitions dropped by drop_partitions / expire_partitions, with exact values. */
    std::vector<PartitionValues> partitions() const {
        std::vector<PartitionValues> out;
        size_t n = paimon_cleanup_report_name_count(r_);
        for (size_t i = 0; i < n; i++) {
            size_t fields = paimon_cleanup_report_partition_field_count(r_, i);
            if (fields == 0) continue;
            PartitionValues p;
            for (size_t f = 0; f < fields; f++)
                p.emplace_back(str(paimon_cleanup_report_partition_key(r_, i, f)),
                               str(paimon_cleanup_report_partition_value(r_, i, f)));
            out.push_back(std::move(p));
        }
        return out;
    }
    /** Data files a partition drop / expiry marked deleted (and their rows and bytes). */
    uint64_t files_marked_deleted() const noexcept {
        return paimon_cleanup_report_files_marked_deleted(r_);
    }
    uint64_t rows_marked_deleted() const noexcept {
        return paimon_cleanup_report_rows_marked_deleted(r_);
    }
    uint64_t bytes_marked_deleted() const noexcept {
        return paimon_cleanup_report_bytes_marked_deleted(r_);
    }
    /** Snapshots the run committed (partition drop / expiry), in commit order. */
    std::vector<int64_t> committed_snapshot_ids() const {
        std::vector<int64_t> out;
        size_t n = paimon_cleanup_report_committed_snapshot_count(r_);
        for (size_t i = 0; i < n; i++) out.push_back(paimon_cleanup_report_committed_snapshot_id(r_, i));
        return out;
    }
    /** Cut-off of an orphan-file removal, milliseconds since the Unix epoch. */
    int64_t cutoff_ms() const noexcept { return paimon_cleanup_report_cutoff_ms(r_); }
    /** Orphan-file removal: files examined / kept as referenced / kept by the veto. */
    uint64_t candidates() const noexcept { return paimon_cleanup_report_candidates(r_); }
    uint64_t referenced() const noexcept { return paimon_cleanup_report_referenced(r_); }
    uint64_t vetoed() const noexcept { return paimon_cleanup_report_vetoed(r_); }
    /** Things the run deliberately left alone, and why. */
    std::vector<std::string> warnings() const {
        return list(paimon_cleanup_report_warning_count(r_), paimon_cleanup_report_warning);
    }
    /** Sub-reports of maintain(), one per step that ran (views into this report). */
    std::vector<ReportView> steps() const {
        std::vector<ReportView> out;
        size_t n = paimon_cleanup_report_step_count(r_);
        for (size_t i = 0; i < n; i++) out.emplace_back(paimon_cleanup_report_step(r_, i));
        return out;
    }
    /** The whole report as the CLI's --json document. */
    std::string json() const { return str(paimon_cleanup_report_json(r_)); }

    /** The native handle (not owned by the view). */
    const PaimonCleanupReport *get() const noexcept { return r_; }

protected:
    const PaimonCleanupReport *r_;

private:
    static std::string str(const char *s) { return s != nullptr ? std::string(s) : std::string(); }
    std::vector<std::string> list(size_t n,
                                  const char *(*at)(const PaimonCleanupReport *, size_t)) const {
        std::vector<std::string> out;
        out.reserve(n);
        for (size_t i = 0; i < n; i++) out.push_back(str(at(r_, i)));
        return out;
    }
    std::map<std::string, uint64_t> by_class(bool bytes) const {
        std::map<std::string, uint64_t> out;
        for (int32_t c = 0; c < kFileClassCount; c++) {
            uint64_t files = paimon_cleanup_report_files(r_, c);
            if (files == 0) continue;
            out[paimon_cleanup_file_class_name(c)] = bytes ? paimon_cleanup_report_bytes(r_, c) : files;
        }
        return out;
    }
};

/** The outcome of a maintenance operation: owns the native report. Move-only; readable from any
 *  thread; the views from steps() stay valid while it lives. */
class Report : public ReportView {
public:
    /** Takes ownership of a native report (nullptr gives an empty report). */
    explicit Report(PaimonCleanupReport *raw = nullptr) noexcept : ReportView(raw) {}
    Report(Report &&other) noexcept : ReportView(other.release()) {}
    Report &operator=(Report &&other) noexcept {
        if (this != &other) {
            paimon_cleanup_report_free(const_cast<PaimonCleanupReport *>(r_));
            r_ = other.release();
        }
        return *this;
    }
    Report(const Report &) = delete;
    Report &operator=(const Report &) = delete;
    ~Report() { paimon_cleanup_report_free(const_cast<PaimonCleanupReport *>(r_)); }

    /** Gives up ownership of the native handle; the Report becomes empty. */
    PaimonCleanupReport *release() noexcept {
        PaimonCleanupReport *raw = const_cast<PaimonCleanupReport *>(r_);
        r_ = nullptr;
        return raw;
    }
};

namespace detail {

/** The C view of an option map (pointers into `options`, which must outlive it). */
struct OptionArrays {
    std::vector<const char *> keys, values;
    explicit OptionArrays(const std::map<std::string, std::string> &options) {
        keys.reserve(options.size());
        values.reserve(options.size());
        for (const auto &kv : options) {
            keys.push_back(kv.first.c_str());
            values.push_back(kv.second.c_str());
        }
    }
};

/** Runs an operation that hands out a report; `thrown` receives a progress callback's
 *  exception (when not NULL, instead of reporting it in the result). */
template <class F>
Result<Report> try_run_report(const RunOptions *run, std::exception_ptr *thrown, F &&op) {
    std::optional<detail::RunCall> call;
    try {
        call.emplace(run);
    } catch (const Error &e) {
        return Result<Report>::failure(e.status(), e.message());
    }
    PaimonCleanupReport *raw = nullptr;
    Result<void> r = detail::try_call(
        [&](PaimonCleanupError **err) { return op(call->get(), &raw, err); });
    Report report(raw);  // owns it before anything else can throw
    if (call->callback_error()) {
        if (thrown != nullptr) {
            *thrown = call->callback_error();
            return Result<Report>::failure(Status::Cancelled, "progress callback threw");
        }
        return Result<Report>::failure(Status::Cancelled, call->callback_error_message());
    }
    if (!r) return Result<Report>::failure(r.status(), r.message());
    return Result<Report>::success(std::move(report));
}
template <class F>
Report run_report(const RunOptions *run, F &&op) {
    std::exception_ptr thrown;
    Result<Report> r = try_run_report(run, &thrown, std::forward<F>(op));
    if (thrown) std::rethrow_exception(thrown);
    return std::move(r).value();
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Configurations

/**
 * Settings of a snapshot expiry. Every field starts unset: the table's option applies (schema
 * options overridden by the Context's options), then Paimon's default. Setters throw Error for
 * out-of-range values and return *this for chaining. Move-only; an operation copies the settings
 * when it starts.
 */
class ExpireConfig {
public:
    /** An empty config. Throws Error (only on allocation failure in the library). */
    ExpireConfig() {
        PaimonCleanupExpireConfig *raw = nullptr;
        detail::check([&](PaimonCleanupError **err) {
            return paimon_cleanup_expire_config_new(&raw, err);
        });
        handle_.reset(raw);
    }

    /** snapshot.num-retained.min (>= 1). */
    ExpireConfig &retain_min(int64_t n) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_retain_min(handle_.get(), n, e);
        });
    }
    /** snapshot.num-retained.max (>= 1). */
    ExpireConfig &retain_max(int64_t n) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_retain_max(handle_.get(), n, e);
        });
    }
    /** snapshot.time-retained: snapshots younger than this are kept (0 = no age protection). */
    ExpireConfig &time_retained(std::chrono::milliseconds d) {
        if (d.count() < 0) throw Error(Status::InvalidArgument, "time_retained must not be negative");
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_time_retained_ms(
                handle_.get(), static_cast<uint64_t>(d.count()), e);
        });
    }
    /** An absolute cut-off instead of time_retained: snapshots committed at or after `t` are
     *  kept. A cut-off in the future is refused when the operation runs. */
    ExpireConfig &older_than(std::chrono::system_clock::time_point t) {
        int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
        return older_than_ms(ms);
    }
    /** older_than() in milliseconds since the Unix epoch. */
    ExpireConfig &older_than_ms(int64_t epoch_ms) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_older_than_ms(handle_.get(), epoch_ms, e);
        });
    }
    /** snapshot.expire.limit: at most this many snapshots per run (>= 1). */
    ExpireConfig &max_expires(int64_t n) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_max_expires(handle_.get(), n, e);
        });
    }
    /** snapshot.clean-empty-directories. */
    ExpireConfig &clean_empty_dirs(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_clean_empty_dirs(handle_.get(), on, e);
        });
    }
    /** Compute and report, change nothing. */
    ExpireConfig &dry_run(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_dry_run(handle_.get(), on, e);
        });
    }
    /** Refuse (Status::Conflict) when a tag pins a snapshot that would expire. */
    ExpireConfig &refuse_if_tags_pin(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_refuse_if_tags_pin(handle_.get(), on, e);
        });
    }

    /** expire_changelogs only: remove every changelog older than the earliest snapshot. */
    ExpireConfig &delete_all_changelogs(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_expire_config_set_delete_all_changelogs(handle_.get(), on, e);
        });
    }

    const PaimonCleanupExpireConfig *get() const noexcept { return handle_.get(); }

private:
    template <class F>
    ExpireConfig &set(F &&f) {
        if (!handle_) throw Error(Status::NullPointer, "use of a moved-from ExpireConfig");
        detail::check(std::forward<F>(f));
        return *this;
    }
    detail::Owned<PaimonCleanupExpireConfig, paimon_cleanup_expire_config_free> handle_;
};

/** Veto callback of an orphan-file removal: return true to KEEP the file. `path` is relative
 *  to the table root when under it (the report's path form), valid during the call only. */
using VetoCallback = std::function<bool(std::string_view path)>;

/**
 * Settings of an orphan-file removal. Defaults: cut-off now - 1 day, writers assumed running
 * (a cut-off within the last hour is refused), no veto, not a dry run. Move-only; setters throw
 * Error for out-of-range values.
 */
class OrphanConfig {
public:
    OrphanConfig() : vetoes_(std::make_unique<Vetoes>()) {
        PaimonCleanupOrphanConfig *raw = nullptr;
        detail::check([&](PaimonCleanupError **err) {
            return paimon_cleanup_orphan_config_new(&raw, err);
        });
        handle_.reset(raw);
    }

    /** Only files last modified before `t` may be deleted. */
    OrphanConfig &older_than(std::chrono::system_clock::time_point t) {
        return older_than_ms(
            std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
    }
    /** older_than() in milliseconds since the Unix epoch. */
    OrphanConfig &older_than_ms(int64_t epoch_ms) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_orphan_config_set_older_than_ms(handle_.get(), epoch_ms, e);
        });
    }
    OrphanConfig &dry_run(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_orphan_config_set_dry_run(handle_.get(), on, e);
        });
    }
    /** DANGER: declares that nothing writes to the table during the run, which allows a cut-off
     *  within the last hour. See paimon_cleanup_orphan_config_set_no_writers_running. */
    OrphanConfig &no_writers_running(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_orphan_config_set_no_writers_running(handle_.get(), on, e);
        });
    }
    /** DANGER: declares that the table's external data roots belong to it alone, so they are
     *  listed and cleaned (default: skipped; tables sharing a root share its directories). See
     *  paimon_cleanup_orphan_config_set_external_roots_owned. */
    OrphanConfig &external_roots_owned(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_orphan_config_set_external_roots_owned(handle_.get(), on, e);
        });
    }
    /** Directory listings in flight (0 = the executor's I/O concurrency). */
    OrphanConfig &list_concurrency(uint32_t n) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_orphan_config_set_list_concurrency(handle_.get(), n, e);
        });
    }
    /** Deletions in flight (0 = the executor's I/O concurrency). */
    OrphanConfig &delete_concurrency(uint32_t n) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_orphan_config_set_delete_concurrency(handle_.get(), n, e);
        });
    }
    /**
     * Sets (or, with an empty function, removes) the veto. It runs on the calling thread or an
     * executor worker thread, once per file that would be deleted; calls of one run never
     * overlap. An exception it throws keeps the file (the safe answer). Callbacks set earlier stay
     * alive with the config, so runs already started with them are not disturbed.
     */
    OrphanConfig &veto(VetoCallback callback) {
        if (!handle_) throw Error(Status::NullPointer, "use of a moved-from OrphanConfig");
        if (!callback) {
            return set([&](PaimonCleanupError **e) {
                return paimon_cleanup_orphan_config_set_veto(handle_.get(), nullptr, nullptr, e);
            });
        }
        std::lock_guard<std::mutex> lock(vetoes_->mutex);
        vetoes_->callbacks.push_back(std::make_unique<VetoCallback>(std::move(callback)));
        void *user_data = vetoes_->callbacks.back().get();
        detail::check([&](PaimonCleanupError **e) {
            return paimon_cleanup_orphan_config_set_veto(handle_.get(), &OrphanConfig::trampoline,
                                                         user_data, e);
        });
        return *this;
    }

    const PaimonCleanupOrphanConfig *get() const noexcept { return handle_.get(); }

private:
    struct Vetoes {
        std::mutex mutex;
        std::vector<std::unique_ptr<VetoCallback>> callbacks;
    };
    static bool trampoline(void *user_data, const char *path) noexcept {
        try {
            return (*static_cast<VetoCallback *>(user_data))(
                path != nullptr ? std::string_view(path) : std::string_view());
        } catch (...) {
            return true;  // keep the file
        }
    }
    template <class F>
    OrphanConfig &set(F &&f) {
        if (!handle_) throw Error(Status::NullPointer, "use of a moved-from OrphanConfig");
        detail::check(std::forward<F>(f));
        return *this;
    }
    // Declared before the handle: destroyed after it, so no run can see a freed callback.
    std::unique_ptr<Vetoes> vetoes_;
    detail::Owned<PaimonCleanupOrphanConfig, paimon_cleanup_orphan_config_free> handle_;
};

/**
 * Settings of a partition expiry. Every field starts unset: the table's partition.expiration-*
 * and partition.timestamp-* options apply, then Paimon's defaults (an expiration time is
 * required somewhere). Move-only; setters throw Error for out-of-range values.
 */
class PartitionExpireConfig {
public:
    PartitionExpireConfig() {
        PaimonCleanupPartitionExpireConfig *raw = nullptr;
        detail::check([&](PaimonCleanupError **err) {
            return paimon_cleanup_partition_expire_config_new(&raw, err);
        });
        handle_.reset(raw);
    }
    /** partition.expiration-time (> 0). */
    PartitionExpireConfig &expiration_time(std::chrono::milliseconds d) {
        if (d.count() <= 0) throw Error(Status::InvalidArgument, "expiration_time must be positive");
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_expiration_time_ms(
                handle_.get(), static_cast<uint64_t>(d.count()), e);
        });
    }
    /** partition.expiration-strategy. */
    PartitionExpireConfig &strategy(PartitionExpireStrategy s) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_strategy(
                handle_.get(), static_cast<int32_t>(s), e);
        });
    }
    /** partition.timestamp-formatter (a Java DateTimeFormatter pattern such as "yyyyMMdd"). */
    PartitionExpireConfig &timestamp_formatter(const std::string &pattern) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_timestamp_formatter(
                handle_.get(), pattern.c_str(), e);
        });
    }
    /** partition.timestamp-pattern, e.g. "$dt $hr:00:00". */
    PartitionExpireConfig &timestamp_pattern(const std::string &pattern) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_timestamp_pattern(
                handle_.get(), pattern.c_str(), e);
        });
    }
    /** partition.expiration-max-num (> 0). */
    PartitionExpireConfig &max_expires(uint64_t n) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_max_expires(handle_.get(), n, e);
        });
    }
    /** partition.expiration-batch-size (> 0). */
    PartitionExpireConfig &batch_size(uint64_t n) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_batch_size(handle_.get(), n, e);
        });
    }
    PartitionExpireConfig &dry_run(bool on) {
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_dry_run(handle_.get(), on, e);
        });
    }
    /** Measure expiry from `t` instead of the wall clock (not in the future). */
    PartitionExpireConfig &now(std::chrono::system_clock::time_point t) {
        int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
        return set([&](PaimonCleanupError **e) {
            return paimon_cleanup_partition_expire_config_set_now_ms(handle_.get(), ms, e);
        });
    }

    const PaimonCleanupPartitionExpireConfig *get() const noexcept { return handle_.get(); }

private:
    template <class F>
    PartitionExpireConfig &set(F &&f) {
        if (!handle_) throw Error(Status::NullPointer, "use of a moved-from PartitionExpireConfig");
        detail::check(std::forward<F>(f));
        return *this;
    }
    detail::Owned<PaimonCleanupPartitionExpireConfig, paimon_cleanup_partition_expire_config_free>
        handle_;
};

/** Settings of maintain(): everything else comes from the table's options. Move-only. */
class MaintainConfig {
public:
    MaintainConfig() {
        PaimonCleanupMaintainConfig *raw = nullptr;
        detail::check([&](PaimonCleanupError **err) {
            return paimon_cleanup_maintain_config_new(&raw, err);
        });
        handle_.reset(raw);
    }
    MaintainConfig &dry_run(bool on) {
        if (!handle_) throw Error(Status::NullPointer, "use of a moved-from MaintainConfig");
        detail::check([&](PaimonCleanupError **e) {
            return paimon_cleanup_maintain_config_set_dry_run(handle_.get(), on, e);
        });
        return *this;
    }
    const PaimonCleanupMaintainConfig *get() const noexcept { return handle_.get(); }

private:
    detail::Owned<PaimonCleanupMaintainConfig, paimon_cleanup_maintain_config_free> handle_;
};

/** A partition spec for drop_partitions: key -> value, matched against the partition values
 *  (not the directory names): the table's default partition name (`__DEFAULT_PARTITION__`)
 *  stands for NULL, "" for the empty string, " " for one space (all three share a directory);
 *  other types as in the directory name or SQL. A prefix of the keys matches every partition
 *  below it. */
using PartitionSpec = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// Context and operations

/** Overview of a table's main branch (the C struct; plain data). */
using TableSummary = PaimonCleanupTableSummary;

/**
 * A table context: the table location and the options used to reach and read it (storage
 * credentials, endpoint, ... and overrides of table options). Immutable and thread-safe;
 * move-only. Every maintenance operation is a method taking the Executor to run on.
 */
class Context {
public:
    /** Creates a context; throws Error (empty URI, empty key, invalid UTF-8, ...). The table is
     *  not opened here: a missing table is reported by the operations (Status::NotFound). */
    explicit Context(const std::string &table_uri,
                     const std::map<std::string, std::string> &options = {})
        : Context(create(table_uri, options).value()) {}

    /** The option key that selects the branch every operation works on (default "main"), like
     *  Paimon Java's `branch` table option. A URI ending in `<table>$branch_<name>` names the
     *  branch too. */
    static constexpr const char *kBranchOption = "branch";

    /** Non-throwing constructor of a context on branch `branch` (the `branch` option set):
     *  expiry, tags, consumers and partitions change only that branch's versions and keep every
     *  file any branch reads; orphan removal is table-wide. */
    static Result<Context> create_on_branch(const std::string &table_uri,
                                            const std::string &branch,
                                            std::map<std::string, std::string> options = {}) {
        options[kBranchOption] = branch;
        return create(table_uri, options);
    }

    /** Non-throwing constructor. */
    static Result<Context> create(const std::string &table_uri,
                                  const std::map<std::string, std::string> &options = {}) {
        detail::OptionArrays a(options);
        PaimonCleanupContext *raw = nullptr;
        Result<void> r = detail::try_call([&](PaimonCleanupError **err) {
            return paimon_cleanup_context_new(table_uri.c_str(), a.keys.data(), a.values.data(),
                                              a.keys.size(), &raw, err);
        });
        if (!r) return Result<Context>::failure(r.status(), r.message());
        return Result<Context>::success(Context(Handle(raw)));
    }

    /** Overview of main: snapshots, tags, branches, live files. Read-only. Throws Error. */
    TableSummary summary(const Executor &executor) const { return try_summary(executor).value(); }
    Result<TableSummary> try_summary(const Executor &executor) const {
        TableSummary s{};
        Result<void> r = detail::try_call([&](PaimonCleanupError **err) {
            return paimon_cleanup_table_summary(handle_.get(), executor.get(), &s, err);
        });
        if (!r) return Result<TableSummary>::failure(r.status(), r.message());
        return Result<TableSummary>::success(s);
    }

// Each operation has a throwing form returning Report and a try_ form returning Result<Report>.
#define PAIMON_CLEANUP_HPP_OP(name, params, call)                                         \
    Report name params const {                                                              \
        return detail::run_report(&run, [&](const PaimonCleanupRunOptions *o,                  \
                                            PaimonCleanupReport **out,                          \
                                            PaimonCleanupError **err) { return call; });        \
    }                                                                                       \
    Result<Report> try_##name params const {                                                \
        return detail::try_run_report(&run, nullptr,                                        \
                                      [&](const PaimonCleanupRunOptions *o,                 \
                                          PaimonCleanupReport **out,                        \
                                          PaimonCleanupError **err) { return call; });      \
    }

    /** Expires old snapshots of main and deletes the files only they referenced, in crash-safe
     *  order. Files needed by retained snapshots, tags, branches, changelogs are never deleted. */
    PAIMON_CLEANUP_HPP_OP(expire_snapshots,
                          (const Executor &executor, const ExpireConfig &config,
                           const RunOptions &run = RunOptions()),
                          paimon_cleanup_expire_snapshots(handle_.get(), executor.get(),
                                                          config.get(), o, out, err))

    /** Expires long-lived changelogs (decoupled changelog lifecycle) and their files. */
    PAIMON_CLEANUP_HPP_OP(expire_changelogs,
                          (const Executor &executor, const ExpireConfig &config,
                           const RunOptions &run = RunOptions()),
                          paimon_cleanup_expire_changelogs(handle_.get(), executor.get(),
                                                           config.get(), o, out, err))

    /** Deletes a tag and the files only it kept. A missing tag is listed in Report::missing(). */
    PAIMON_CLEANUP_HPP_OP(delete_tag,
                          (const Executor &executor, const std::string &tag, bool dry_run = false,
                           const RunOptions &run = RunOptions()),
                          paimon_cleanup_delete_tag(handle_.get(), executor.get(), tag.c_str(),
                                                    dry_run, o, out, err))

    /** Expires tags whose retention passed and, when `older_than_ms` > 0, tags created before it
     *  (milliseconds since the Unix epoch). */
    PAIMON_CLEANUP_HPP_OP(expire_tags,
                          (const Executor &executor, int64_t older_than_ms = 0,
                           bool dry_run = false, const RunOptions &run = RunOptions()),
                          paimon_cleanup_expire_tags(handle_.get(), executor.get(), older_than_ms,
                                                     dry_run, o, out, err))

    /** Expires consumers that have not advanced for `expiration` (0 = the table's
     *  consumer.expiration-time). A negative `expiration` is refused (INVALID_ARGUMENT, the
     *  library's bound on `expiration_ms`), not taken as 0. */
    PAIMON_CLEANUP_HPP_OP(expire_consumers,
                          (const Executor &executor,
                           std::chrono::milliseconds expiration = std::chrono::milliseconds(0),
                           bool dry_run = false, const RunOptions &run = RunOptions()),
                          paimon_cleanup_expire_consumers(
                              handle_.get(), executor.get(),
                              static_cast<uint64_t>(expiration.count()),
                              dry_run, o, out, err))

    /** Removes files older than the cut-off that nothing references (see OrphanConfig). */
    PAIMON_CLEANUP_HPP_OP(remove_orphan_files,
                          (const Executor &executor, const OrphanConfig &config,
                           const RunOptions &run = RunOptions()),
                          paimon_cleanup_remove_orphan_files(handle_.get(), executor.get(),
                                                             config.get(), o, out, err))

    /** Expires partitions older than the expiration time (one OVERWRITE commit per batch). */
    PAIMON_CLEANUP_HPP_OP(expire_partitions,
                          (const Executor &executor, const PartitionExpireConfig &config,
                           const RunOptions &run = RunOptions()),
                          paimon_cleanup_expire_partitions(handle_.get(), executor.get(),
                                                           config.get(), o, out, err))

    /** Runs what the table's options ask for: tag, consumer, snapshot, changelog expiry. The
     *  steps are Report::steps(). */
    PAIMON_CLEANUP_HPP_OP(maintain,
                          (const Executor &executor, const MaintainConfig &config = MaintainConfig(),
                           const RunOptions &run = RunOptions()),
                          paimon_cleanup_maintain(handle_.get(), executor.get(), config.get(), o,
                                                  out, err))

#undef PAIMON_CLEANUP_HPP_OP

    /** Drops partitions with one OVERWRITE commit marking their live files deleted (the files
     *  go with a later snapshot expiry). Nothing is committed on failure. */
    Report drop_partitions(const Executor &executor, const std::vector<PartitionSpec> &specs,
                           const RunOptions &run = RunOptions()) const {
        SpecArrays a(specs);
        return detail::run_report(&run, [&](const PaimonCleanupRunOptions *o,
                                            PaimonCleanupReport **out, PaimonCleanupError **err) {
            return paimon_cleanup_drop_partitions(handle_.get(), executor.get(), a.specs.data(),
                                                  a.specs.size(), o, out, err);
        });
    }
    Result<Report> try_drop_partitions(const Executor &executor,
                                       const std::vector<PartitionSpec> &specs,
                                       const RunOptions &run = RunOptions()) const {
        SpecArrays a(specs);
        return detail::try_run_report(&run, nullptr, [&](const PaimonCleanupRunOptions *o,
                                                 PaimonCleanupReport **out, PaimonCleanupError **err) {
            return paimon_cleanup_drop_partitions(handle_.get(), executor.get(), a.specs.data(),
                                                  a.specs.size(), o, out, err);
        });
    }
    /** What drop_partitions would mark deleted at the latest snapshot; commits nothing
     *  (report.dry_run() is true, no committed snapshot). */
    Report preview_drop_partitions(const Executor &executor,
                                   const std::vector<PartitionSpec> &specs,
                                   const RunOptions &run = RunOptions()) const {
        SpecArrays a(specs);
        return detail::run_report(&run, [&](const PaimonCleanupRunOptions *o,
                                            PaimonCleanupReport **out, PaimonCleanupError **err) {
            return paimon_cleanup_preview_drop_partitions(handle_.get(), executor.get(),
                                                          a.specs.data(), a.specs.size(), o, out,
                                                          err);
        });
    }

    const PaimonCleanupContext *get() const noexcept { return handle_.get(); }

private:
    using Handle = detail::Owned<PaimonCleanupContext, paimon_cleanup_context_free>;
    explicit Context(Handle h) noexcept : handle_(std::move(h)) {}

    /** The C view of partition specs (pointers into `specs`, which must outlive it). */
    struct SpecArrays {
        std::vector<std::vector<const char *>> keys, values;
        std::vector<PaimonCleanupPartitionSpec> specs;
        explicit SpecArrays(const std::vector<PartitionSpec> &in) {
            keys.resize(in.size());
            values.resize(in.size());
            for (size_t i = 0; i < in.size(); i++) {
                for (const auto &kv : in[i]) {
                    keys[i].push_back(kv.first.c_str());
                    values[i].push_back(kv.second.c_str());
                }
                specs.push_back(PaimonCleanupPartitionSpec{keys[i].data(), values[i].data(),
                                                           keys[i].size()});
            }
        }
    };

    Handle handle_;
};

// ---------------------------------------------------------------------------------------------
// Snapshot expiry as units

/** An opaque, versioned byte string of the units API (a unit, a partial result, a plan state, a
 *  decision, a gate, a shard report): ship it, store it, retry it; only this library reads it. */
using Bytes = std::vector<uint8_t>;

namespace detail {

/** Owns one out-parameter of a units call (a buffer or a buffer list) and frees it with `Free`
 *  when it goes out of scope, whether the call succeeded, failed or something threw. */
template <class T, void (*Free)(T *)>
class OutSlot {
public:
    OutSlot() = default;
    OutSlot(const OutSlot &) = delete;
    OutSlot &operator=(const OutSlot &) = delete;
    ~OutSlot() { Free(raw_); }
    T **out() noexcept { return &raw_; }
    const T *get() const noexcept { return raw_; }

private:
    T *raw_ = nullptr;
};
using BufferSlot = OutSlot<PaimonCleanupBuffer, paimon_cleanup_buffer_free>;
using BufferListSlot = OutSlot<PaimonCleanupBufferList, paimon_cleanup_buffer_list_free>;

/** A copy of a borrowed buffer's bytes. */
inline Bytes copy_buffer(const PaimonCleanupBuffer *buffer) {
    const uint8_t *data = paimon_cleanup_buffer_data(buffer);
    return data == nullptr ? Bytes() : Bytes(data, data + paimon_cleanup_buffer_len(buffer));
}

/** Copies of every buffer of a list, as `T` (Bytes, or std::string for UTF-8 paths). */
template <class T>
std::vector<T> copy_buffer_list(const PaimonCleanupBufferList *list) {
    std::vector<T> out;
    size_t n = paimon_cleanup_buffer_list_count(list);
    out.reserve(n);
    for (size_t i = 0; i < n; i++) {
        const PaimonCleanupBuffer *b = paimon_cleanup_buffer_list_get(list, i);
        const uint8_t *data = paimon_cleanup_buffer_data(b);
        if (data == nullptr) {
            out.emplace_back();
        } else {
            out.emplace_back(data, data + paimon_cleanup_buffer_len(b));
        }
    }
    return out;
}

/** Pointers to and lengths of byte strings, as the conclude calls take them (borrowed from
 *  `parts`, which must outlive the call). */
struct ByteArrays {
    std::vector<const uint8_t *> data;
    std::vector<size_t> lens;
    explicit ByteArrays(const std::vector<Bytes> &parts) {
        data.reserve(parts.size());
        lens.reserve(parts.size());
        for (const Bytes &p : parts) {
            data.push_back(p.data());
            lens.push_back(p.size());
        }
    }
};

/** Runs one units call `op(const PaimonCleanupRunOptions *, PaimonCleanupError **)` with the
 *  run control of `run`; throws Error on failure, or rethrows what a progress callback threw. */
template <class F>
void run_units_call(const RunOptions &run, F &&op) {
    RunCall call(&run);
    Result<void> r = try_call([&](PaimonCleanupError **err) { return op(call.get(), err); });
    if (call.callback_error()) std::rethrow_exception(call.callback_error());
    r.value();
}

}  // namespace detail

/**
 * Snapshot expiry split into units that an engine schedules on its own workers (the C functions
 * `paimon_cleanup_expiry_*`; the Java binding's ExpiryUnits). Every unit and every partial result
 * is an opaque Bytes value. The result equals Context::expire_snapshots (same report, same files
 * left):
 *
 *   namespace eu = pc::expiry_units;
 *   eu::Step plan = eu::plan(table, exec, cfg);                       // driver
 *   pc::Bytes candidates;                                             // workers, any order:
 *   for (auto &u : plan.units) candidates = eu::merge(candidates, eu::execute(exec, u));
 *   eu::Step protect = eu::protect(table, exec, plan.state, candidates);
 *   pc::Bytes kept;   // merge of execute() over protect.units (none: empty)
 *   eu::Step decision = eu::decide(table, exec, protect.state, candidates, kept);
 *   pc::Bytes deleted; // merge of execute() over decision.units (the delete units)
 *   pc::Report r = eu::finish(table, exec, decision.state, deleted);
 *
 * The sharded decision (no process holds every candidate) replaces protect and decide: split()
 * each candidate result into a summary and K pieces, gate() on the driver with the merged
 * summaries, decide_shard() per shard with its merged pieces, execute() the shards' delete
 * units, conclude() with every shard's report, then finish().
 *
 * Ownership: every Bytes value is the caller's own copy (the native buffers are freed before a
 * function returns, also when it throws). Thread-safety: every function may be called from any
 * number of threads at once (as the C functions); the Context and Executor rules apply.
 * Errors: every function throws paimon_cleanup::Error with the library's status (e.g.
 * Status::InvalidArgument for foreign, corrupted or doubled bytes, Status::Storage when a
 * delete unit failed and finish stops before the metadata); a progress callback's exception
 * is rethrown. There are no try_ forms.
 */
namespace expiry_units {

/** What a driver step returns: its state (or decision) and the units to execute next. */
struct Step {
    /** The plan state (plan), the new state (protect) or the decision (decide): keep it on the
     *  driver for the next step. */
    Bytes state;
    /** The units to execute with execute() (possibly none). */
    std::vector<Bytes> units;
};

/** A candidate result split for the sharded decision. */
struct Split {
    /** For the driver: merge every summary and pass it to gate(). */
    Bytes summary;
    /** One piece per shard (piece i is shard i): merge each shard's pieces for decide_shard(). */
    std::vector<Bytes> shards;
};

/** What gate() returns. */
struct Gated {
    /** The decision so far, for conclude() (keep it on the driver). */
    Bytes decision;
    /** What every shard decides with (ship it to the shard tasks). */
    Bytes gate;
};

/** What decide_shard() returns. */
struct ShardDecision {
    /** The shard's report, for conclude(). */
    Bytes report;
    /** The shard's delete units (none in a dry run), executed after conclude() succeeded. */
    std::vector<Bytes> delete_units;
    /** With a gate that hands the paths to the tasks, in a dry run: every path the shard would
     *  delete (relative to the table root, in the single-process order); otherwise empty. */
    std::vector<std::string> paths;
};

/** What execute_handing_paths() returns. */
struct Executed {
    /** The unit's partial result, merged like execute()'s. */
    Bytes result;
    /** For a delete unit of a gate that hands the paths to the tasks: every path it deleted, in
     *  order; otherwise empty. */
    std::vector<std::string> paths;
};

/** Plans an expiry of the context's branch (driver; reads only): the retention rules of
 *  expire_snapshots pick the snapshots; returns the plan state and the candidate units. */
inline Step plan(const Context &table, const Executor &executor, const ExpireConfig &config,
                 const RunOptions &run = RunOptions()) {
    detail::BufferSlot state;
    detail::BufferListSlot units;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_units_plan(table.get(), executor.get(), config.get(), o,
                                                state.out(), units.out(), err);
    });
    return Step{detail::copy_buffer(state.get()), detail::copy_buffer_list<Bytes>(units.get())};
}

/** Executes one unit (candidate, protect or delete) on any host and returns its partial result.
 *  `host_options` are added to the options the unit carries (they win): units never carry
 *  credentials, so pass them here. Candidate and protect units only read; a delete unit checks
 *  every path again before its first deletion and reports the files it could not delete. */
inline Bytes execute(const Executor &executor, const Bytes &unit,
                     const std::map<std::string, std::string> &host_options = {},
                     const RunOptions &run = RunOptions()) {
    detail::OptionArrays a(host_options);
    detail::BufferSlot out;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_unit_execute(executor.get(), unit.data(), unit.size(),
                                                  a.keys.data(), a.values.data(), a.keys.size(), o,
                                                  out.out(), err);
    });
    return detail::copy_buffer(out.get());
}

/** execute(), also handing out the paths a delete unit of a gate with `paths_to_tasks` deleted
 *  (that unit's result then carries counts and a sample; plain execute() refuses it). */
inline Executed execute_handing_paths(const Executor &executor, const Bytes &unit,
                                      const std::map<std::string, std::string> &host_options = {},
                                      const RunOptions &run = RunOptions()) {
    detail::OptionArrays a(host_options);
    detail::BufferSlot out;
    detail::BufferListSlot paths;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_unit_execute_paths(executor.get(), unit.data(), unit.size(),
                                                        a.keys.data(), a.values.data(),
                                                        a.keys.size(), o, out.out(), paths.out(),
                                                        err);
    });
    return Executed{detail::copy_buffer(out.get()),
                    detail::copy_buffer_list<std::string>(paths.get())};
}

/** Merges two partial results of one stage (pure computation, any thread). Associative and
 *  commutative; an empty Bytes is the neutral element. A unit's result included twice, or
 *  results of two plans or stages, throw Status::InvalidArgument. */
inline Bytes merge(const Bytes &a, const Bytes &b) {
    detail::BufferSlot out;
    detail::check([&](PaimonCleanupError **err) {
        return paimon_cleanup_expiry_partials_merge(a.data(), a.size(), b.data(), b.size(),
                                                    out.out(), err);
    });
    return detail::copy_buffer(out.get());
}

/** After the candidate units (driver): `candidates` is every candidate unit's result, merged.
 *  Reads every version that protects files and returns the new state and the protect units.
 *  Nothing is deleted. */
inline Step protect(const Context &table, const Executor &executor, const Bytes &state,
                    const Bytes &candidates, const RunOptions &run = RunOptions()) {
    detail::BufferSlot next;
    detail::BufferListSlot units;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_units_protect(table.get(), executor.get(), o, state.data(),
                                                   state.size(), candidates.data(),
                                                   candidates.size(), next.out(), units.out(), err);
    });
    return Step{detail::copy_buffer(next.get()), detail::copy_buffer_list<Bytes>(units.get())};
}

/** After the protect units (driver): `state` is protect()'s, `candidates` the Bytes given to
 *  protect(), `protected_keys` every protect unit's result merged (empty when there was none).
 *  Builds and checks the deletion plan; returns the decision and the delete units (none in a
 *  dry run). Nothing is deleted. */
inline Step decide(const Context &table, const Executor &executor, const Bytes &state,
                   const Bytes &candidates, const Bytes &protected_keys,
                   const RunOptions &run = RunOptions()) {
    detail::BufferSlot decision;
    detail::BufferListSlot units;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_units_decide(
            table.get(), executor.get(), o, state.data(), state.size(), candidates.data(),
            candidates.size(), protected_keys.data(), protected_keys.size(), decision.out(),
            units.out(), err);
    });
    return Step{detail::copy_buffer(decision.get()),
                detail::copy_buffer_list<Bytes>(units.get())};
}

/** After every delete unit (driver): `decision` from decide() or conclude(), `deleted` every
 *  delete unit's result merged (empty when there was none). Deletes the metadata in the
 *  crash-safe order and returns the report expire_snapshots returns. Throws Status::Storage
 *  before deleting metadata when a delete unit could not delete a file (a rerun finishes). */
inline Report finish(const Context &table, const Executor &executor, const Bytes &decision,
                     const Bytes &deleted, const RunOptions &run = RunOptions()) {
    return detail::run_report(&run, [&](const PaimonCleanupRunOptions *o,
                                         PaimonCleanupReport **out, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_units_finish(table.get(), executor.get(), o, decision.data(),
                                                  decision.size(), deleted.data(), deleted.size(),
                                                  out, err);
    });
}

/** Splits a candidate unit's result (or several merged) into its summary and `shards` pieces
 *  (1 to 65,536) for the sharded decision (pure computation, any thread). */
inline Split split(const Bytes &partial, uint32_t shards) {
    detail::BufferSlot summary;
    detail::BufferListSlot pieces;
    detail::check([&](PaimonCleanupError **err) {
        return paimon_cleanup_expiry_partial_split(partial.data(), partial.size(), shards,
                                                   summary.out(), pieces.out(), err);
    });
    return Split{detail::copy_buffer(summary.get()),
                 detail::copy_buffer_list<Bytes>(pieces.get())};
}

/** The gate of the sharded decision (driver), instead of protect() and decide(): `summary` is
 *  every candidate unit's summary merged, split into `shards`. Decides and checks the metadata
 *  the expiry deletes; returns the decision so far and the gate. Nothing is deleted.
 *  `paths_to_tasks`: each freed data or changelog path stays with the task that frees it (see
 *  decide_shard().paths and execute_handing_paths()); the final report then holds the counts,
 *  every failure and a sample of the paths. */
inline Gated gate(const Context &table, const Executor &executor, const Bytes &state,
                  const Bytes &summary, uint32_t shards, bool paths_to_tasks = false,
                  const RunOptions &run = RunOptions()) {
    detail::BufferSlot decision;
    detail::BufferSlot gated;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_units_gate_with_paths(
            table.get(), executor.get(), o, state.data(), state.size(), summary.data(),
            summary.size(), shards, paths_to_tasks, decision.out(), gated.out(), err);
    });
    return Gated{detail::copy_buffer(decision.get()), detail::copy_buffer(gated.get())};
}

/** Decides shard `shard` on any host: `piece` is every candidate unit's piece of that shard,
 *  merged. Returns the shard's report and delete units (and, see ShardDecision::paths, its
 *  paths). `host_options` as for execute(). Nothing is deleted. */
inline ShardDecision decide_shard(const Executor &executor, const Bytes &gate, uint32_t shard,
                                  const Bytes &piece,
                                  const std::map<std::string, std::string> &host_options = {},
                                  const RunOptions &run = RunOptions()) {
    detail::OptionArrays a(host_options);
    detail::BufferSlot report;
    detail::BufferListSlot units;
    detail::BufferListSlot paths;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_expiry_shard_decide_paths(
            executor.get(), gate.data(), gate.size(), shard, piece.data(), piece.size(),
            a.keys.data(), a.values.data(), a.keys.size(), o, report.out(), units.out(),
            paths.out(), err);
    });
    return ShardDecision{detail::copy_buffer(report.get()),
                         detail::copy_buffer_list<Bytes>(units.get()),
                         detail::copy_buffer_list<std::string>(paths.get())};
}

/** Concludes the sharded decision (driver; pure computation): `decision` from gate(),
 *  `reports` every shard's report exactly once (any order). Returns the decision for finish().
 *  A missing, doubled or foreign report throws Status::InvalidArgument. */
inline Bytes conclude(const Bytes &decision, const std::vector<Bytes> &reports) {
    detail::ByteArrays a(reports);
    detail::BufferSlot out;
    detail::check([&](PaimonCleanupError **err) {
        return paimon_cleanup_expiry_units_conclude(decision.data(), decision.size(),
                                                    a.data.data(), a.lens.data(), a.data.size(),
                                                    out.out(), err);
    });
    return detail::copy_buffer(out.get());
}

}  // namespace expiry_units

/**
 * Orphan-file removal split into units that an engine schedules on its own workers (the C
 * functions `paimon_cleanup_orphan_*`; the Java binding's OrphanUnits). Every unit and every
 * partial result is an opaque Bytes value. The result equals Context::remove_orphan_files
 * (same report, same files left):
 *
 *   namespace ou = pc::orphan_units;
 *   ou::Step plan = ou::plan(table, exec, cfg);                       // driver
 *   pc::Bytes merged;                                                 // workers, any order:
 *   for (auto &u : plan.units) merged = ou::merge(merged, ou::execute(exec, u));
 *   ou::Step decision = ou::decide(table, exec, cfg, plan.state, merged);
 *   pc::Bytes deleted; // merge of execute() over decision.units (the delete units)
 *   pc::Report r = ou::finish(table, exec, decision.state, deleted);
 *
 * The sharded decision (no process holds every candidate and reference) replaces decide():
 * split() each plan unit's result into a summary and K pieces; gate() on the driver with the
 * plan state and the merged summaries; decide_shard() per shard with the merged pieces of that
 * shard; gate() again with the state the first gate returned: while it says `decide`, a new
 * version appeared and every shard decides again with the new gate; once it does not,
 * conclude() with that state, the summary and every shard's report of the round, execute the
 * shards' delete units, then finish().
 *
 * Ownership: every Bytes value is the caller's own copy (the native buffers are freed before a
 * function returns, also when it throws). Thread-safety: every function may be called from any
 * number of threads at once (as the C functions); the Context, Executor and OrphanConfig rules
 * apply (the config's veto is asked by decide() and decide_shard()). Errors: every function
 * throws paimon_cleanup::Error with the library's status (Status::InvalidArgument for foreign,
 * corrupted, doubled or missing results; Status::Malformed / NotFound / Storage when metadata a
 * version needs cannot be read, with nothing deleted); a progress callback's exception is
 * rethrown. There are no try_ forms.
 */
namespace orphan_units {

/** What plan() and decide() return: the driver-side state (or decision) and the units. */
struct Step {
    /** The plan state (plan) or the decision (decide): keep it on the driver. */
    Bytes state;
    /** The units to execute with execute(): plan units, or delete units (none in a dry run). */
    std::vector<Bytes> units;
};

/** A plan unit's result split for the sharded decision. */
struct Split {
    /** For the driver: merge every summary and pass it to gate() and conclude(). */
    Bytes summary;
    /** One piece per shard (piece i is shard i): merge each shard's pieces for decide_shard(). */
    std::vector<Bytes> shards;
};

/** What gate() returns. */
struct Gated {
    /** The updated state: pass it to the next gate() and, once `decide` is false, to
     *  conclude(). */
    Bytes state;
    /** What every shard decides with (ship it to the shard tasks). */
    Bytes gate;
    /** True after the first gate and after one that found a new version: every shard decides
     *  (again) with `gate`. False confirms the round the shards decided. */
    bool decide = false;
};

/** What decide_shard() returns. */
struct ShardDecision {
    /** The shard's report, for conclude(). */
    Bytes report;
    /** The shard's delete units (none in a dry run), executed after conclude() succeeded. */
    std::vector<Bytes> delete_units;
};

/** Plans an orphan-file removal (driver; reads only): checks the cut-off, walks the partition
 *  directories, reads every version's manifest lists and returns the plan state and the plan
 *  units ("list these directories", "read these manifests"). `config`'s veto is not asked
 *  here. */
inline Step plan(const Context &table, const Executor &executor, const OrphanConfig &config,
                 const RunOptions &run = RunOptions()) {
    detail::BufferSlot state;
    detail::BufferListSlot units;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_orphan_units_plan(table.get(), executor.get(), config.get(), o,
                                                state.out(), units.out(), err);
    });
    return Step{detail::copy_buffer(state.get()), detail::copy_buffer_list<Bytes>(units.get())};
}

/** Executes one unit (plan or delete) on any host and returns its partial result.
 *  `host_options` are added to the options the unit carries (they win): units never carry
 *  credentials, so pass them here. Plan units only read; a delete unit checks every path again
 *  before its first deletion and reports the files it could not delete in its result. */
inline Bytes execute(const Executor &executor, const Bytes &unit,
                     const std::map<std::string, std::string> &host_options = {},
                     const RunOptions &run = RunOptions()) {
    detail::OptionArrays a(host_options);
    detail::BufferSlot out;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_orphan_unit_execute(executor.get(), unit.data(), unit.size(),
                                                  a.keys.data(), a.values.data(), a.keys.size(), o,
                                                  out.out(), err);
    });
    return detail::copy_buffer(out.get());
}

/** Merges two partial results (pure computation, any thread). Associative and commutative
 *  (identical bytes in any order and grouping); an empty Bytes is the neutral element. A
 *  unit's result included twice, or results of two plans, throw Status::InvalidArgument. */
inline Bytes merge(const Bytes &a, const Bytes &b) {
    detail::BufferSlot out;
    detail::check([&](PaimonCleanupError **err) {
        return paimon_cleanup_orphan_partials_merge(a.data(), a.size(), b.data(), b.size(),
                                                    out.out(), err);
    });
    return detail::copy_buffer(out.get());
}

/** Decides (driver): `state` from plan(), `merged` every plan unit's result merged, `config`
 *  the plan's (its veto is asked here). Lists the versions again until none is new, keeps
 *  every referenced file and every file the veto keeps, checks every path; returns the
 *  decision and the delete units (none in a dry run). Nothing is deleted. A missing plan unit
 *  result throws Status::InvalidArgument. */
inline Step decide(const Context &table, const Executor &executor, const OrphanConfig &config,
                   const Bytes &state, const Bytes &merged, const RunOptions &run = RunOptions()) {
    detail::BufferSlot decision;
    detail::BufferListSlot units;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_orphan_units_decide(table.get(), executor.get(), config.get(), o,
                                                  state.data(), state.size(), merged.data(),
                                                  merged.size(), decision.out(), units.out(), err);
    });
    return Step{detail::copy_buffer(decision.get()),
                detail::copy_buffer_list<Bytes>(units.get())};
}

/** After every delete unit (driver): `decision` from decide() or conclude(), `deleted` every
 *  delete unit's result merged (empty when there was none). Removes the data directories left
 *  empty and returns the report remove_orphan_files returns. */
inline Report finish(const Context &table, const Executor &executor, const Bytes &decision,
                     const Bytes &deleted, const RunOptions &run = RunOptions()) {
    return detail::run_report(&run, [&](const PaimonCleanupRunOptions *o,
                                         PaimonCleanupReport **out, PaimonCleanupError **err) {
        return paimon_cleanup_orphan_units_finish(table.get(), executor.get(), o, decision.data(),
                                                  decision.size(), deleted.data(), deleted.size(),
                                                  out, err);
    });
}

/** Splits a plan unit's result (or several merged) into its summary and `shards` pieces (1 to
 *  65,536) by file name (pure computation, any thread). */
inline Split split(const Bytes &partial, uint32_t shards) {
    detail::BufferSlot summary;
    detail::BufferListSlot pieces;
    detail::check([&](PaimonCleanupError **err) {
        return paimon_cleanup_orphan_partial_split(partial.data(), partial.size(), shards,
                                                   summary.out(), pieces.out(), err);
    });
    return Split{detail::copy_buffer(summary.get()),
                 detail::copy_buffer_list<Bytes>(pieces.get())};
}

/** The gate of the sharded decision (driver): `state` is plan()'s or the previous gate's,
 *  `summary` every plan unit's summary merged, `shards` the count the results were split
 *  into. Lists the versions again until none is new; see Gated for what to do next. Nothing
 *  is deleted. */
inline Gated gate(const Context &table, const Executor &executor, const Bytes &state,
                  const Bytes &summary, uint32_t shards, const RunOptions &run = RunOptions()) {
    detail::BufferSlot next;
    detail::BufferSlot gated;
    bool decide = false;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_orphan_units_gate(table.get(), executor.get(), o, state.data(),
                                                state.size(), summary.data(), summary.size(),
                                                shards, next.out(), gated.out(), &decide, err);
    });
    return Gated{detail::copy_buffer(next.get()), detail::copy_buffer(gated.get()), decide};
}

/** Decides shard `shard` (any host): `gate` from the round's gate(), `piece` every plan unit's
 *  piece of that shard merged, `config` the plan's (its veto is asked here). Returns the
 *  shard's report and delete units. Nothing is deleted. */
inline ShardDecision decide_shard(const Context &table, const Executor &executor,
                                  const OrphanConfig &config, const Bytes &gate, uint32_t shard,
                                  const Bytes &piece, const RunOptions &run = RunOptions()) {
    detail::BufferSlot report;
    detail::BufferListSlot units;
    detail::run_units_call(run, [&](const PaimonCleanupRunOptions *o, PaimonCleanupError **err) {
        return paimon_cleanup_orphan_shard_decide(table.get(), executor.get(), config.get(), o,
                                                  gate.data(), gate.size(), shard, piece.data(),
                                                  piece.size(), report.out(), units.out(), err);
    });
    return ShardDecision{detail::copy_buffer(report.get()),
                         detail::copy_buffer_list<Bytes>(units.get())};
}

/** Concludes the sharded decision (driver; pure computation): `state` from the gate() that
 *  confirmed the round (`decide` false), `summary` every plan unit's summary merged, `reports`
 *  every shard's report of that round exactly once (any order). Returns the decision for
 *  finish(). A missing, doubled or stale report throws Status::InvalidArgument. */
inline Bytes conclude(const Bytes &state, const Bytes &summary, const std::vector<Bytes> &reports) {
    detail::ByteArrays a(reports);
    detail::BufferSlot out;
    detail::check([&](PaimonCleanupError **err) {
        return paimon_cleanup_orphan_units_conclude(state.data(), state.size(), summary.data(),
                                                    summary.size(), a.data.data(), a.lens.data(),
                                                    a.data.size(), out.out(), err);
    });
    return detail::copy_buffer(out.get());
}

}  // namespace orphan_units

// ---------------------------------------------------------------------------------------------
// Warehouse

/** A table of a warehouse: its `db.table` name and its location (what Context takes). */
struct WarehouseTable {
    std::string name;
    std::string location;
    bool operator==(const WarehouseTable &o) const {
        return name == o.name && location == o.location;
    }
};

/** Non-throwing list_tables(). */
inline Result<std::vector<WarehouseTable>> try_list_tables(const std::string &root,
                                                           const std::string &pattern = "*.*") {
    PaimonCleanupTableList *raw = nullptr;
    Result<void> r = detail::try_call([&](PaimonCleanupError **err) {
        return paimon_cleanup_warehouse_list_tables(root.c_str(), pattern.c_str(), &raw, err);
    });
    if (!r) return Result<std::vector<WarehouseTable>>::failure(r.status(), r.message());
    detail::Owned<PaimonCleanupTableList, paimon_cleanup_table_list_free> list(raw);
    std::vector<WarehouseTable> out;
    size_t n = paimon_cleanup_table_list_count(list.get());
    out.reserve(n);
    for (size_t i = 0; i < n; i++) {
        const char *name = paimon_cleanup_table_list_name(list.get(), i);
        const char *location = paimon_cleanup_table_list_location(list.get(), i);
        out.push_back(WarehouseTable{name != nullptr ? name : "",
                                     location != nullptr ? location : ""});
    }
    return Result<std::vector<WarehouseTable>>::success(std::move(out));
}

/**
 * The tables of the local filesystem-catalog warehouse `root` (`root/<db>.db/<table>/` with a
 * `schema/` directory) that `pattern` names (`db.table`; either part may be or hold `*`:
 * "db.*", "*.*"), sorted by name; each location opens with Context. Reads directories on the
 * calling thread. Throws Error: NotFound when no table matches, InvalidArgument for a pattern
 * without '.', Unsupported for an object-store URI, Storage when a directory cannot be listed.
 */
inline std::vector<WarehouseTable> list_tables(const std::string &root,
                                               const std::string &pattern = "*.*") {
    return try_list_tables(root, pattern).value();
}

}  // namespace paimon_cleanup

#endif  // PAIMON_CLEANUP_HPP
