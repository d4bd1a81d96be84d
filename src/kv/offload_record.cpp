#include "kv/offload_record.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace hadron {
namespace {

constexpr char kMagic[8] = {'H', 'D', 'R', 'N', 'K', 'V', 'B', '\0'};
constexpr uint32_t kVersion = 1;

uint64_t header_checksum(std::span<const std::byte> header) {
  // The checksum field counts as zero.
  std::vector<std::byte> copy(header.begin(), header.end());
  std::memset(copy.data() + offsetof(RecordHeader, header_checksum), 0, sizeof(uint64_t));
  return XXH3_64bits(copy.data(), copy.size());
}

}  // namespace

size_t record_header_bytes(int64_t n_tokens) {
  return round_up_to(sizeof(RecordHeader) + n_tokens * sizeof(int32_t), kRecordAlign);
}

uint64_t offload_checksum(std::span<const std::byte> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

void write_record_header(std::span<std::byte> header, uint64_t key, uint64_t fingerprint,
                         std::span<const int32_t> tokens, std::span<const std::byte> payload) {
  std::fill(header.begin(), header.end(), std::byte{0});
  RecordHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kVersion;
  h.n_tokens = static_cast<uint32_t>(tokens.size());
  h.key = key;
  h.fingerprint = fingerprint;
  h.payload_bytes = payload.size();
  h.payload_checksum = offload_checksum(payload);
  std::memcpy(header.data(), &h, sizeof(h));
  std::memcpy(header.data() + sizeof(h), tokens.data(), tokens.size_bytes());
  h.header_checksum = header_checksum(header);
  std::memcpy(header.data() + offsetof(RecordHeader, header_checksum), &h.header_checksum,
              sizeof(h.header_checksum));
}

std::string check_record(std::span<const std::byte> header, std::span<const std::byte> payload,
                         uint64_t key, uint64_t fingerprint, std::span<const int32_t> tokens) {
  if (header.size() != record_header_bytes(static_cast<int64_t>(tokens.size())))
    return "header of the wrong size";
  RecordHeader h{};
  std::memcpy(&h, header.data(), sizeof(h));
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 || h.version != kVersion)
    return "not a block record of this version";
  if (header_checksum(header) != h.header_checksum) return "header checksum mismatch";
  if (h.key != key) return fmt::format("key {:016x}, expected {:016x}", h.key, key);
  if (h.fingerprint != fingerprint) return "written for another model, dtype or cache layout";
  if (h.n_tokens != tokens.size() || h.payload_bytes != payload.size()) return "sizes differ";
  if (std::memcmp(header.data() + sizeof(h), tokens.data(), tokens.size_bytes()) != 0)
    return "tokens differ";
  if (offload_checksum(payload) != h.payload_checksum) return "payload checksum mismatch";
  return {};
}

}  // namespace hadron
