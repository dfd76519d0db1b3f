// What the C++ binding tests share: a CHECK that counts and reports without stopping, a
// temporary directory removed with everything in it when it goes out of scope, a table's file
// tree and the paimon-gen binary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <stdlib.h>

/** Counts a check and, when `...` is false, a failure (printed with its place); the including
 * test defines the `int checks` and `int failures` it counts in. */
#define CHECK(...)                                                                            \
    do {                                                                                      \
        checks++;                                                                             \
        if (!(__VA_ARGS__)) {                                                                 \
            failures++;                                                                       \
            std::fprintf(stderr, "FAIL %s:%d: CHECK(%s)\n", __FILE__, __LINE__, #__VA_ARGS__); \
        }                                                                                     \
    } while (0)

/** A new directory under the system's temporary directory, named `<prefix>-XXXXXX`. */
struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const char *prefix) {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path = buf.data();
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

/** Every regular file under `root`, relative and sorted, with its size. */
inline std::vector<std::pair<std::string, uintmax_t>> file_tree(const std::filesystem::path &root) {
    std::vector<std::pair<std::string, uintmax_t>> out;
    for (auto &e : std::filesystem::recursive_directory_iterator(root))
        if (e.is_regular_file())
            out.emplace_back(std::filesystem::relative(e.path(), root).string(), e.file_size());
    std::sort(out.begin(), out.end());
    return out;
}

/** The paimon-gen binary: $PAIMON_GEN, else `fallback` (CMake's cargo target directory); empty
 *  when neither is a file. */
inline std::string gen_binary(const char *fallback) {
    const char *env = std::getenv("PAIMON_GEN");
    std::string bin = (env != nullptr && env[0] != '\0') ? env : fallback;
    return std::filesystem::is_regular_file(bin) ? bin : std::string();
}
