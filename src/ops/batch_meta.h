// BatchMeta: the only contract between the model runner and the attention / KV-cache ops.
//
// A step runs T tokens from S sequences. The tokens of sequence s are rows
// [cu_seqlens_q[s], cu_seqlens_q[s+1]) of every [T, ...] activation; they are the last
// q_len(s) positions of a context of seq_lens_kv[s] tokens, whose KV (including this step's,
// written first) lives in the paged cache blocks listed in block_tables[s].
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace hadron {

struct BatchMeta {
  int n_tokens = 0;          // T
  int n_seqs = 0;            // S
  int max_q_len = 0;         // max over s of q_len(s)
  int max_kv_len = 0;        // max over s of seq_lens_kv[s]
  int block_size = 0;        // tokens per KV block
  bool decode_only = false;  // every q_len(s) == 1

  // All tensors below live on the backend's device.
  Tensor token_ids;     // I32 [T]
  Tensor positions;     // I32 [T]   position of each token in its sequence
  Tensor cu_seqlens_q;  // I32 [S + 1] prefix sums of q_len
  Tensor seq_lens_kv;   // I32 [S]   context length after this step
  Tensor slot_mapping;  // I32 [T]   block_idx * block_size + offset where the token's K/V goes
  Tensor block_tables;  // I32 [S, max_blocks_per_seq]
  Tensor logits_rows;   // I32 [R]   rows of the hidden state that produce logits, increasing
  Tensor state_slots;   // I32 [S]   linear-attention state slot of each sequence (-1: none)
};

}  // namespace hadron
