// The disk tier of the KV offload: blocks the host tier evicts, one file per block
// (offload_record.h) in a private folder (mode 0700, made in --kv-offload-disk-dir, removed with
// its files when the tier is destroyed), least recently used first out. Files are written and
// read in batches through DiskIo (io_uring, or pread/pwrite), with O_DIRECT where the file
// system takes it. Every read is checked (offload_record.h): a block that fails, whose file went
// missing or was cut short, or whose write failed (a full disk) is dropped, never served.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/offload_disk_io.h"
#include "kv/offload_options.h"
#include "kv/offload_stats.h"

namespace hadron {

class DiskTier {
 public:
  // A block to write or read: its key and tokens, and a host slot of slot_bytes
  // (kRecordAlign-aligned) whose first block_bytes are the block.
  struct Block {
    uint64_t key = 0;
    std::span<const int32_t> tokens;
    std::byte* slot = nullptr;
  };

  // InputError when parent_dir is not a folder hadron can write in.
  DiskTier(const std::string& parent_dir, size_t capacity_bytes, size_t block_bytes,
           size_t slot_bytes, int64_t block_size, uint64_t fingerprint, std::unique_ptr<DiskIo> io);
  ~DiskTier();
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  const std::string& folder() const { return folder_; }
  std::string path_of(uint64_t key) const;
  const char* io_name() const { return io_->name(); }
  bool direct_io() const { return direct_; }
  size_t record_bytes() const { return header_bytes_ + slot_bytes_; }
  OffloadTierStats stats() const;

  bool contains(uint64_t key, std::span<const int32_t> tokens) const;
  void pin(uint64_t key);
  void unpin(uint64_t key);
  // Writes the blocks not on disk yet, evicting the least recently used unpinned files for
  // room; a block whose write fails is not kept.
  void store(std::span<const Block> blocks);
  // Reads each block into its slot; per block whether it passed every check. Blocks that fail
  // are dropped.
  std::vector<bool> read(std::span<const Block> blocks);

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    int pins = 0;
    std::list<uint64_t>::iterator lru;
  };

  int open_record(uint64_t key, bool write);
  void drop(uint64_t key, const std::string& why);
  void erase(uint64_t key);
  // Evicts unpinned files until n more fit; how many fit then.
  int64_t make_room(int64_t n);

  std::string folder_;
  size_t block_bytes_;
  size_t slot_bytes_;
  size_t header_bytes_;
  int64_t capacity_;  // records
  uint64_t fingerprint_;
  std::unique_ptr<DiskIo> io_;
  bool direct_ = false;  // O_DIRECT, where the file system takes it (tmpfs does not)
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> lru_;  // front: evicted first
  OffloadTierStats stats_;
};

}  // namespace hadron
