// A batch's inputs from a list and its deterministic share of them, for engines that spread a
// folder of millions over processes and hosts (GNU parallel, Slurm job arrays, Kubernetes
// indexed Jobs): --files-from, -0, --shard. docs/scale-out.md has the recipes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blurtool {

/// The paths listed in `list` (a file, or "-" for standard input): one a line, or, with
/// `nul_separated`, separated by NUL bytes (as `find -print0` writes them, so a name may hold a
/// newline). Each path is taken byte for byte as written (spaces and all; no quoting, no
/// trailing-space trimming), but for the carriage return of a CRLF line end; empty entries are
/// skipped. Throws blurtool::UsageError naming "--files-from 'list'" when it cannot be read,
/// for a list with a NUL byte read by lines (a -print0 list would join names), and for one with
/// newlines and no NUL byte read with `nul_separated` (a find -print list given -0; so a
/// hand-made -0 list of one name holding a newline needs its NUL terminator, as -print0 writes).
std::vector<std::string> read_file_list(const std::string& list, bool nul_separated);

/// The form of `path` a batch hashes, dedupes and mirrors: lexically normal, generic
/// separators, without a leading "./" ("./a//b/../c.jpg" -> "a/c.jpg"). No file system access.
std::string path_key(const std::string& path);

/// Where a listed `path` goes under the output folder: path_key(path) without its root
/// ("/data/a.jpg" -> "data/a.jpg", as `rsync --relative` mirrors it); "" for a path that
/// leaves its starting folder ("../a.jpg"), which has no place under the output folder.
std::string mirrored_path(const std::string& path);

/// 64-bit FNV-1a of the bytes of `text` (offset basis 14695981039346656037, prime
/// 1099511628211): the stable hash of --shard, the same on every host and in every release.
std::uint64_t fnv1a64(const std::string& text);

/// A deterministic share of a batch's files (--shard I/N): the files whose path_key hashes
/// (fnv1a64) to I modulo N. N runs with I = 0..N-1 (or 1..N: N is the same share as 0) cover any
/// list exactly once, whatever its order, without talking to each other.
struct Shard {
  std::uint64_t index = 0;  ///< I, 0..count (count is the same share as 0)
  std::uint64_t count = 1;  ///< N >= 1; 1: every file
  /// Whether the file at `path` (as the batch found it) is in this share.
  bool takes(const std::string& path) const {
    return count <= 1 || fnv1a64(path_key(path)) % count == index % count;
  }
};

/// Parses --shard's "I/N": N from 1 to 2^32, I from 0 to N. Throws blurtool::UsageError naming
/// --shard otherwise.
Shard parse_shard(const std::string& text);

}  // namespace blurtool
