// The digest of a trace's bytes in the simulation's input hash (the cache key): every byte of every
// file, 1 GB at 10,000 ranks (0.2 s here, on the path to the first frame). Computed once per
// process for the same files unchanged; a command that infers its mapping starts it on a thread
// of lowered priority while the inference's survey reads the same file, so that the simulation
// finds it done.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace kanoko::sim {

/// XXH3-64 over the files in order, each as its name's length (u64), its name (the file name
/// alone, without the folder) and its bytes. The value prefetched for the same list, each file
/// the same (device, inode, size and modification time), is used, waited for while it is
/// computed; otherwise it is computed now. Throws InputError naming a file that cannot be read.
std::uint64_t trace_files_hash(const std::vector<std::filesystem::path>& files);

/// Starts trace_files_hash({file}) on a thread of lowered priority (src/base/background.hpp),
/// unless it is known or under way already. A file that cannot be examined is left alone (the
/// read that follows says why).
void prefetch_trace_files_hash(const std::filesystem::path& file);

}  // namespace kanoko::sim
