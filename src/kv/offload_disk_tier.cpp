#include "kv/offload_disk_tier.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/clock.h"
#include "core/error.h"
#include "kv/offload_record.h"

namespace hadron {
namespace {

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::byte[], FreeDeleter>;

// n zeroed bytes aligned for O_DIRECT.
AlignedBytes aligned_bytes(size_t n) {
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kRecordAlign, std::max(n, kRecordAlign)));
  HADRON_CHECK(p != nullptr, "out of memory for {} bytes of disk-tier headers", n);
  std::memset(p, 0, n);
  return AlignedBytes(p);
}

std::string make_private_folder(const std::string& parent) {
  struct stat info {};
  if (stat(parent.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    input_error("--kv-offload-disk-dir {}: not a folder", parent);
  std::string pattern = parent + "/hadron-kv-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)  // mode 0700, owned by this process's user
    input_error("--kv-offload-disk-dir {}: cannot make a folder there: {}", parent,
                std::strerror(errno));
  return pattern;
}

}  // namespace

DiskTier::DiskTier(const std::string& parent_dir, size_t capacity_bytes, size_t block_bytes,
                   size_t slot_bytes, int64_t block_size, uint64_t fingerprint,
                   std::unique_ptr<DiskIo> io)
    : folder_(make_private_folder(parent_dir)),
      block_bytes_(block_bytes),
      slot_bytes_(slot_bytes),
      header_bytes_(record_header_bytes(block_size)),
      capacity_(static_cast<int64_t>(capacity_bytes / (header_bytes_ + slot_bytes_))),
      fingerprint_(fingerprint),
      io_(std::move(io)) {
  stats_.capacity_blocks = capacity_;
  const std::string probe = folder_ + "/probe";  // does the file system take O_DIRECT?
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0600);
  direct_ = fd >= 0;
  if (fd >= 0) close(fd);
  unlink(probe.c_str());
}

DiskTier::~DiskTier() {
  for (const auto& [key, entry] : entries_) unlink(path_of(key).c_str());
  rmdir(folder_.c_str());
}

std::string DiskTier::path_of(uint64_t key) const {
  return fmt::format("{}/{:016x}.kvb", folder_, key);
}

OffloadTierStats DiskTier::stats() const {
  OffloadTierStats s = stats_;
  s.blocks = static_cast<int64_t>(entries_.size());
  s.bytes = s.blocks * static_cast<int64_t>(record_bytes());
  return s;
}

bool DiskTier::contains(uint64_t key, std::span<const int32_t> tokens) const {
  const auto it = entries_.find(key);
  return it != entries_.end() && std::equal(tokens.begin(), tokens.end(), it->second.tokens.begin(),
                                            it->second.tokens.end());
}

void DiskTier::pin(uint64_t key) {
  if (auto it = entries_.find(key); it != entries_.end()) ++it->second.pins;
}

void DiskTier::unpin(uint64_t key) {
  if (auto it = entries_.find(key); it != entries_.end() && it->second.pins > 0) --it->second.pins;
}

int DiskTier::open_record(uint64_t key, bool write) {
  const std::string path = path_of(key);
  const int flags = (write ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW;
  return open(path.c_str(), flags | (direct_ ? O_DIRECT : 0), 0600);
}

void DiskTier::erase(uint64_t key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return;
  unlink(path_of(key).c_str());
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

void DiskTier::drop(uint64_t key, const std::string& why) {
  std::fprintf(stderr, "kv offload: dropped disk block %016llx (%s); it will be recomputed\n",
               static_cast<unsigned long long>(key), why.c_str());
  ++stats_.dropped_blocks;
  if (auto it = entries_.find(key); it != entries_.end()) it->second.pins = 0;
  erase(key);
}

int64_t DiskTier::make_room(int64_t n) {
  for (auto it = lru_.begin();
       it != lru_.end() && static_cast<int64_t>(entries_.size()) + n > capacity_;) {
    const uint64_t key = *it++;
    if (entries_.at(key).pins == 0) erase(key);
  }
  return std::max<int64_t>(0, capacity_ - static_cast<int64_t>(entries_.size()));
}

void DiskTier::store(std::span<const Block> blocks) {
  std::vector<const Block*> fresh;
  for (const Block& b : blocks) {
    if (const auto it = entries_.find(b.key); it != entries_.end()) {
      if (contains(b.key, b.tokens)) lru_.splice(lru_.end(), lru_, it->second.lru);
      continue;  // on disk already (or a colliding key, kept as it is)
    }
    fresh.push_back(&b);
  }
  fresh.resize(std::min<int64_t>(static_cast<int64_t>(fresh.size()), make_room(fresh.size())));
  if (fresh.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  AlignedBytes headers = aligned_bytes(fresh.size() * header_bytes_);
  std::vector<DiskOp> ops(fresh.size());
  std::vector<int> open_errors(fresh.size(), 0);
  for (size_t i = 0; i < fresh.size(); ++i) {
    std::byte* header = headers.get() + i * header_bytes_;
    write_record_header({header, header_bytes_}, fresh[i]->key, fingerprint_, fresh[i]->tokens,
                        {fresh[i]->slot, block_bytes_});
    ops[i] = {open_record(fresh[i]->key, true),
              true,
              {{{header, header_bytes_}, {fresh[i]->slot, slot_bytes_}}},
              2,
              0};
    open_errors[i] = errno;
  }
  std::vector<DiskOp> valid;
  for (const DiskOp& op : ops)
    if (op.fd >= 0) valid.push_back(op);
  io_->run(valid);
  size_t next_valid = 0;
  for (size_t i = 0; i < fresh.size(); ++i) {
    const uint64_t key = fresh[i]->key;
    const int64_t result = ops[i].fd >= 0 ? valid[next_valid++].result : -open_errors[i];
    if (ops[i].fd >= 0) close(ops[i].fd);
    if (result != static_cast<int64_t>(record_bytes())) {
      std::fprintf(stderr, "kv offload: writing disk block %016llx failed (%s); not kept\n",
                   static_cast<unsigned long long>(key),
                   result < 0 ? std::strerror(static_cast<int>(-result)) : "short write");
      unlink(path_of(key).c_str());
      ++stats_.dropped_blocks;
      continue;
    }
    Entry& entry = entries_[key];
    entry.tokens.assign(fresh[i]->tokens.begin(), fresh[i]->tokens.end());
    entry.lru = lru_.insert(lru_.end(), key);
    ++stats_.stored_blocks;
    stats_.write_bytes += result;
  }
  stats_.write_seconds += seconds_since(start);
}

std::vector<bool> DiskTier::read(std::span<const Block> blocks) {
  const auto start = std::chrono::steady_clock::now();
  AlignedBytes headers = aligned_bytes(blocks.size() * header_bytes_);
  std::vector<DiskOp> ops;
  std::vector<int> open_errors(blocks.size(), 0);
  std::vector<size_t> op_of(blocks.size(), SIZE_MAX);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (!contains(blocks[i].key, blocks[i].tokens)) {
      open_errors[i] = ENOENT;
      continue;
    }
    const int fd = open_record(blocks[i].key, false);
    if (fd < 0) {
      open_errors[i] = errno;
      continue;
    }
    op_of[i] = ops.size();
    std::byte* header = headers.get() + i * header_bytes_;
    ops.push_back({fd, false, {{{header, header_bytes_}, {blocks[i].slot, slot_bytes_}}}, 2, 0});
  }
  io_->run(ops);
  std::vector<bool> ok(blocks.size(), false);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    if (op_of[i] == SIZE_MAX) {
      drop(b.key, fmt::format("cannot open: {}", std::strerror(open_errors[i])));
      continue;
    }
    const DiskOp& op = ops[op_of[i]];
    close(op.fd);
    if (op.result != static_cast<int64_t>(record_bytes())) {
      drop(b.key, op.result < 0 ? std::strerror(static_cast<int>(-op.result))
                                : fmt::format("{} of {} bytes", op.result, record_bytes()));
      continue;
    }
    const std::string why = check_record({headers.get() + i * header_bytes_, header_bytes_},
                                         {b.slot, block_bytes_}, b.key, fingerprint_, b.tokens);
    if (!why.empty()) {
      drop(b.key, why);
      continue;
    }
    ok[i] = true;
    ++stats_.hit_blocks;
    stats_.read_bytes += op.result;
    const auto it = entries_.find(b.key);
    lru_.splice(lru_.end(), lru_, it->second.lru);
  }
  stats_.read_seconds += seconds_since(start);
  return ok;
}

}  // namespace hadron
