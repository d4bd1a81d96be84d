// The parts of a loaded tokenizer, shared by loading, encoding and decoding.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/decoder.h"
#include "tokenizer/flat_map.h"
#include "tokenizer/model.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"

namespace hadron::tok {

struct TokenizerState {
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  std::unique_ptr<Model> model;
  Decoder decoder;

  std::vector<AddedToken> added_tokens;
  StringMap added_ids;                                  // content -> id
  std::optional<AddedTokenMatcher> raw_matcher;         // normalized == false
  std::optional<AddedTokenMatcher> normalized_matcher;  // normalized == true

  // Post-processor (TemplateProcessing "single", Roberta/Bert): ids around the sequence.
  std::vector<int32_t> prefix_ids;
  std::vector<int32_t> suffix_ids;

  // Per id: its token string (added tokens override the model), whether it is special, and,
  // for a ByteLevel-only decoder, its bytes.
  std::vector<std::string> id_tokens;
  std::vector<bool> special;
  std::vector<std::string> id_bytes;
  // Per id, with a ByteFallback decoder: a <0xXX> token, whose text depends on its neighbours.
  std::vector<bool> byte_fallback;
  bool decoder_is_local = true;  // see Decoder::is_local

  // Finishes loading: builds the matchers and the per-id tables from the added tokens (their
  // ids set, none empty) and the model. The ids run to the largest of the model's and the
  // added tokens', or to n_ids when that is larger (a vocabulary with ids in neither, such as
  // a GGUF file's unused tokens, which a template may still name as BOS or EOS).
  void finalize(std::vector<AddedToken> tokens, int32_t n_ids = 0);
};

}  // namespace hadron::tok
