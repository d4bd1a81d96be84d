#include "core/npy.h"

#include <fstream>
#include <regex>

#include "core/error.h"

namespace hadron {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

// "(3,)" or "(2, 3)", as Python prints a tuple (appended piece by piece: GCC 12 warns, falsely,
// about "(" + std::string under -Wrestrict).
std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  text += shape.size() == 1 ? ",)" : ")";
  return text;
}

}  // namespace

void write_npy(const std::string& path, const float* values, const std::vector<int64_t>& shape) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  // magic(6) + version(2) + header length(2) + header + '\n' is a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) input_error("cannot write {}", path);
  out.write(kMagic, 6);
  out.put(1).put(0);
  const uint16_t header_len = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(header_len & 0xff)).put(static_cast<char>(header_len >> 8));
  out << header;
  int64_t n = 1;
  for (int64_t dim : shape) n *= dim;
  out.write(reinterpret_cast<const char*>(values), n * static_cast<int64_t>(sizeof(float)));
  if (!out) input_error("failed writing {}", path);
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error("cannot open {}", path);
  char prefix[10];
  if (!in.read(prefix, 10) || std::string(prefix, 6) != std::string(kMagic, 6) || prefix[6] != 1)
    input_error("{}: not a version 1 .npy file", path);
  const size_t header_len = static_cast<uint8_t>(prefix[8]) | static_cast<uint8_t>(prefix[9]) << 8;
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) input_error("{}: truncated header", path);
  if (header.find("'descr': '<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    input_error("{}: only little-endian float32 C-order arrays are supported", path);
  std::smatch match;
  if (!std::regex_search(header, match, std::regex(R"('shape': \(([^)]*)\))")))
    input_error("{}: no shape in header", path);
  NpyArray array;
  const std::string dims = match[1];
  const std::regex number(R"(\d+)");
  std::sregex_iterator it(dims.begin(), dims.end(), number), end;
  int64_t n = 1;
  for (; it != end; ++it) {
    array.shape.push_back(std::stoll(it->str()));
    n *= array.shape.back();
  }
  array.values.resize(n);
  if (!in.read(reinterpret_cast<char*>(array.values.data()), n * sizeof(float)))
    input_error("{}: truncated data, expected {} floats", path, n);
  return array;
}

}  // namespace hadron
