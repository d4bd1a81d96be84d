// KvOffload: the prefix cache's tiers below the device pool. Full prefix-cache blocks the pool
// evicts are copied (every layer's part of the block: K and V, or the MLA latent, and indexer
// keys) into the host tier; the host tier's least recently used blocks go to the disk tier.
// A prefix lookup that misses on the device continues its hash chain here and copies the run
// it finds back into fresh device blocks before the step that reads them (ADR 0012).
//
// Copies go through Backend::copy_async in order with the step's work, so a block leaves the
// device after the step that wrote it and arrives before the step that reads it; the host waits
// for them (a recorded event) only before the disk tier touches the slots.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kv/block_manager.h"
#include "kv/kv_cache.h"
#include "kv/offload_disk_tier.h"
#include "kv/offload_host_tier.h"
#include "kv/offload_options.h"
#include "kv/offload_stats.h"

namespace hadron {

class KvOffload final : public PrefixCacheTier {
 public:
  // fingerprint: of the model, the KV dtype and the cache layout; disk records of another
  // fingerprint are never served. InputError when the options do not fit a single block.
  KvOffload(Backend& backend, const KvCache& kv, const OffloadOptions& options,
            uint64_t fingerprint);

  void on_evict(std::span<const EvictedBlock> blocks) override;
  int64_t held_prefix(std::span<const ChainedBlockKey> keys) override;
  int64_t load(std::span<const ChainedBlockKey> keys, std::span<const int32_t> blocks) override;

  OffloadStats stats() const;
  const HostTier& host() const { return host_; }
  // Null without --kv-offload-disk-dir.
  DiskTier* disk() { return disk_.get(); }

 private:
  void copy_out(int32_t block, std::byte* slot);
  void copy_in(const std::byte* slot, int32_t block);
  // Waits for the copies queued so far, before the host reads or writes slot memory.
  void wait_copies();
  // Evicts host entries (to the disk tier, if any) until n more fit.
  void make_host_room(int64_t n);
  // Reads the disk-only keys among keys into host slots; how many leading keys are then
  // in the host tier.
  int64_t promote_from_disk(std::span<const ChainedBlockKey> keys);
  // Releases what held_prefix pinned (pins are 0 or 1: only held_prefix takes them).
  void unpin_all();

  Backend& backend_;
  const KvCache& kv_;
  HostTier host_;
  std::unique_ptr<DiskTier> disk_;
  std::unique_ptr<DeviceEvent> copies_;
  std::vector<uint64_t> pinned_;  // keys held_prefix pinned, in either tier
  OffloadTierStats host_stats_;
};

}  // namespace hadron
