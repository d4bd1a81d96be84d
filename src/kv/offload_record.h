// The disk tier's file format: one file per block, `<key as 16 hex digits>.kvb`, holding a
// header and the block's bytes, both padded to kRecordAlign so they can be read with O_DIRECT.
//
//   [0, header_bytes)                  RecordHeader, then n_tokens int32 tokens, zero padding
//   [header_bytes, + padded payload)   the block as KvCache::block_parts lays it out, padding
//
// header_checksum is XXH3-64 of the header region with that field zero; payload_checksum is
// XXH3-64 of the payload_bytes unpadded bytes. A record is served only if the magic, version,
// key, fingerprint (model, dtype and cache layout), sizes, tokens and both checksums match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace hadron {

inline constexpr size_t kRecordAlign = 4096;

constexpr size_t round_up_to(size_t bytes, size_t align) {
  return (bytes + align - 1) / align * align;
}

struct RecordHeader {
  char magic[8];  // "HDRNKVB\0"
  uint32_t version;
  uint32_t n_tokens;
  uint64_t key;          // the block's hash-chain key
  uint64_t fingerprint;  // of model, dtype and cache layout
  uint64_t payload_bytes;
  uint64_t payload_checksum;
  uint64_t header_checksum;
};

// Bytes of the padded header region of a block of n_tokens tokens.
size_t record_header_bytes(int64_t n_tokens);

// XXH3-64 of bytes.
uint64_t offload_checksum(std::span<const std::byte> bytes);

// Fills header (record_header_bytes(tokens.size()) bytes, zeroed here) for a block.
void write_record_header(std::span<std::byte> header, uint64_t key, uint64_t fingerprint,
                         std::span<const int32_t> tokens, std::span<const std::byte> payload);

// Why a record read back is not served; empty when it is sound. header and payload are the
// bytes read (payload unpadded: payload_bytes long).
std::string check_record(std::span<const std::byte> header, std::span<const std::byte> payload,
                         uint64_t key, uint64_t fingerprint, std::span<const int32_t> tokens);

}  // namespace hadron
