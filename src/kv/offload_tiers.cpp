#include "kv/offload_tiers.h"

#include <algorithm>
#include <chrono>

#include "core/clock.h"
#include "core/error.h"
#include "kv/offload_record.h"

namespace hadron {
namespace {

size_t block_bytes_of(const KvCache& kv) {
  size_t bytes = 0;
  for (const Tensor& part : kv.block_parts(0)) bytes += part.nbytes();
  return bytes;
}

int64_t host_slots(const OffloadOptions& options, size_t block_bytes) {
  const auto n = static_cast<int64_t>(options.host_bytes / round_up_to(block_bytes, kRecordAlign));
  if (n < 1)
    input_error("--kv-offloading-size: {} bytes hold no KV block of {} bytes", options.host_bytes,
                block_bytes);
  return n;
}

// A host view of `part`'s shape at `data`.
Tensor host_view(const Tensor& part, const std::byte* data) {
  return Tensor::view_of(const_cast<std::byte*>(data), part.dtype,
                         std::span<const int64_t>(part.shape.data(), part.ndim), Device::CPU);
}

}  // namespace

KvOffload::KvOffload(Backend& backend, const KvCache& kv, const OffloadOptions& options,
                     uint64_t fingerprint)
    : backend_(backend),
      kv_(kv),
      host_(backend, block_bytes_of(kv), host_slots(options, block_bytes_of(kv))) {
  if (!options.disk_enabled()) return;
  disk_ = std::make_unique<DiskTier>(options.disk_dir, options.disk_bytes, host_.block_bytes(),
                                     host_.slot_bytes(), kv.block_size(), fingerprint,
                                     make_disk_io(options.io));
  if (disk_->stats().capacity_blocks < 1)
    input_error("--kv-offload-disk-gb: {} bytes hold no KV block record of {} bytes",
                options.disk_bytes, disk_->record_bytes());
}

void KvOffload::copy_out(int32_t block, std::byte* slot) {
  for (const Tensor& part : kv_.block_parts(block)) {
    backend_.copy_async(part, host_view(part, slot));
    slot += part.nbytes();
  }
}

void KvOffload::copy_in(const std::byte* slot, int32_t block) {
  for (const Tensor& part : kv_.block_parts(block)) {
    backend_.copy_async(host_view(part, slot), part);
    slot += part.nbytes();
  }
}

void KvOffload::wait_copies() {
  if (copies_) copies_->wait();
  copies_.reset();
}

void KvOffload::make_host_room(int64_t n) {
  const std::vector<uint64_t> victims = host_.victims(n);
  if (victims.empty()) return;
  if (disk_) {
    wait_copies();
    std::vector<DiskTier::Block> spilled;
    for (uint64_t key : victims) {
      const HostTier::Entry& entry = *host_.entry(key);
      spilled.push_back({key, entry.tokens, host_.slot(entry.slot)});
    }
    disk_->store(spilled);
  }
  for (uint64_t key : victims) host_.erase(key);
}

void KvOffload::on_evict(std::span<const EvictedBlock> blocks) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const EvictedBlock*> fresh;
  for (const EvictedBlock& b : blocks) {
    if (HostTier::Entry* entry = host_.find(b.hash, b.tokens))
      host_.touch(*entry);  // the host tier has it already
    else
      fresh.push_back(&b);
  }
  // More blocks than the host tier holds pass through it in rounds, on to the disk tier.
  for (size_t done = 0; done < fresh.size();) {
    const size_t round = std::min<size_t>(fresh.size() - done, host_.n_slots());
    make_host_room(static_cast<int64_t>(round));
    size_t copied = 0;
    for (; copied < round; ++copied) {
      const EvictedBlock& b = *fresh[done + copied];
      HostTier::Entry* entry = host_.insert(b.hash, b.tokens);
      if (entry == nullptr) break;  // every other slot is held by a lookup in progress
      copy_out(b.block, host_.slot(entry->slot));
      ++host_stats_.stored_blocks;
      host_stats_.write_bytes += static_cast<int64_t>(host_.block_bytes());
    }
    copies_ = backend_.record_event();
    if (copied < round) break;
    done += round;
  }
  host_stats_.write_seconds += seconds_since(start);
}

int64_t KvOffload::held_prefix(std::span<const ChainedBlockKey> keys) {
  unpin_all();
  for (const ChainedBlockKey& key : keys) {
    if (HostTier::Entry* entry = host_.find(key.hash, key.tokens))
      host_.pin(*entry);
    else if (disk_ && disk_->contains(key.hash, key.tokens))
      disk_->pin(key.hash);
    else
      break;
    pinned_.push_back(key.hash);
  }
  return static_cast<int64_t>(pinned_.size());
}

int64_t KvOffload::promote_from_disk(std::span<const ChainedBlockKey> keys) {
  std::vector<size_t> on_disk;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (host_.find(keys[i].hash, keys[i].tokens) != nullptr) continue;
    if (!disk_) return static_cast<int64_t>(i);
    on_disk.push_back(i);
  }
  if (on_disk.empty()) return static_cast<int64_t>(keys.size());
  make_host_room(static_cast<int64_t>(on_disk.size()));
  wait_copies();
  size_t limit = keys.size();
  std::vector<DiskTier::Block> reads;
  for (size_t i : on_disk) {
    HostTier::Entry* entry = host_.insert(keys[i].hash, keys[i].tokens);
    if (entry == nullptr) {
      limit = i;
      break;
    }
    reads.push_back({keys[i].hash, keys[i].tokens, host_.slot(entry->slot)});
  }
  const std::vector<bool> ok = disk_->read(reads);
  for (size_t j = 0; j < reads.size(); ++j) {
    if (ok[j]) continue;
    host_.erase(reads[j].key);
    limit = std::min(limit, on_disk[j]);
  }
  return static_cast<int64_t>(limit);
}

int64_t KvOffload::load(std::span<const ChainedBlockKey> keys, std::span<const int32_t> blocks) {
  keys = keys.first(std::min(keys.size(), blocks.size()));
  std::vector<bool> in_host(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    in_host[i] = host_.find(keys[i].hash, keys[i].tokens) != nullptr;
  // Disk blocks pass through host slots: a run longer than the host tier goes in rounds.
  size_t n_loaded = 0;
  while (n_loaded < keys.size()) {
    const auto n_ready = static_cast<size_t>(promote_from_disk(keys.subspan(n_loaded)));
    const auto start = std::chrono::steady_clock::now();
    const size_t end = n_loaded + n_ready;
    for (; n_loaded < end; ++n_loaded) {
      HostTier::Entry* entry = host_.find(keys[n_loaded].hash, keys[n_loaded].tokens);
      if (entry == nullptr) break;
      copy_in(host_.slot(entry->slot), blocks[n_loaded]);
      host_.touch(*entry);
      host_.unpin(entry->key);  // copied: its slot may take the next round's blocks
      host_stats_.hit_blocks += in_host[n_loaded] ? 1 : 0;
      host_stats_.read_bytes += static_cast<int64_t>(host_.block_bytes());
    }
    if (n_ready > 0) copies_ = backend_.record_event();
    host_stats_.read_seconds += seconds_since(start);
    if (n_ready == 0 || n_loaded < end) break;
  }
  unpin_all();
  return static_cast<int64_t>(n_loaded);
}

void KvOffload::unpin_all() {
  for (uint64_t key : pinned_) {
    host_.unpin(key);
    if (disk_) disk_->unpin(key);
  }
  pinned_.clear();
}

OffloadStats KvOffload::stats() const {
  OffloadStats s;
  s.enabled = true;
  s.host = host_stats_;
  s.host.capacity_blocks = host_.n_slots();
  s.host.blocks = host_.n_entries();
  s.host.bytes = s.host.blocks * static_cast<int64_t>(host_.slot_bytes());
  if (disk_) {
    s.disk = disk_->stats();
    s.disk_io = disk_->io_name();
  }
  return s;
}

}  // namespace hadron
