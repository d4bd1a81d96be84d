// Python str operations on UTF-8 strings, by code point.
#include <algorithm>

#include "chat/methods.h"
#include "chat/py_unicode.h"
#include "core/error.h"
#include "core/utf8.h"

namespace hadron::chat {

std::string py_strip(const std::string& s, const Value* chars, bool left, bool right) {
  std::u32string text = utf8_decode(s);
  std::u32string set;
  bool whitespace = !chars || chars->is_none();
  if (!whitespace) {
    if (!chars->is_string()) input_error("TypeError: strip arg must be None or str");
    set = utf8_decode(chars->as_string());
  }
  auto strip_char = [&](char32_t c) {
    return whitespace ? py_isspace(c) : set.find(c) != std::u32string::npos;
  };
  size_t begin = 0, end = text.size();
  if (left)
    while (begin < end && strip_char(text[begin])) ++begin;
  if (right)
    while (end > begin && strip_char(text[end - 1])) --end;
  return utf8_encode(std::u32string_view(text).substr(begin, end - begin));
}

static std::vector<Value> split_whitespace(const std::string& s, int64_t max_split,
                                           bool from_right) {
  std::u32string text = utf8_decode(s);
  if (from_right) std::reverse(text.begin(), text.end());
  std::vector<std::u32string> parts;
  size_t i = 0, n = text.size();
  while (true) {
    while (i < n && py_isspace(text[i])) ++i;
    if (i >= n) break;
    if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
      parts.push_back(text.substr(i));  // the rest keeps its trailing whitespace
      break;
    }
    size_t start = i;
    while (i < n && !py_isspace(text[i])) ++i;
    parts.push_back(text.substr(start, i - start));
  }
  std::vector<Value> out;
  for (auto& p : parts) {
    if (from_right) std::reverse(p.begin(), p.end());
    out.emplace_back(utf8_encode(p));
  }
  if (from_right) std::reverse(out.begin(), out.end());
  return out;
}

std::vector<Value> py_split(const std::string& s, const Value* sep, int64_t max_split,
                            bool from_right) {
  if (!sep || sep->is_none()) return split_whitespace(s, max_split, from_right);
  if (!sep->is_string()) input_error("TypeError: must be str or None, not {}", type_name(*sep));
  const std::string& d = sep->as_string();
  if (d.empty()) input_error("ValueError: empty separator");
  std::vector<Value> out;
  if (!from_right) {
    size_t pos = 0;
    while (max_split < 0 || static_cast<int64_t>(out.size()) < max_split) {
      size_t hit = s.find(d, pos);
      if (hit == std::string::npos) break;
      out.emplace_back(s.substr(pos, hit - pos));
      pos = hit + d.size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  size_t end = s.size();
  while (max_split < 0 || static_cast<int64_t>(out.size()) < max_split) {
    if (end < d.size()) break;
    size_t hit = s.rfind(d, end - d.size());
    if (hit == std::string::npos) break;
    out.emplace_back(s.substr(hit + d.size(), end - hit - d.size()));
    end = hit;
  }
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::string py_replace(const std::string& s, const std::string& old_s, const std::string& new_s,
                       int64_t count) {
  std::string out;
  if (old_s.empty()) {
    std::u32string chars = utf8_decode(s);
    int64_t done = 0;
    for (char32_t c : chars) {
      if (count < 0 || done < count) {
        out += new_s;
        ++done;
      }
      utf8_append(out, c);
    }
    if (count < 0 || done < count) out += new_s;
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t hit = s.find(old_s, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += new_s;
    pos = hit + old_s.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

std::string py_upper(const std::string& s) {
  std::u32string t = utf8_decode(s);
  for (char32_t& c : t) c = py_upper(c);
  return utf8_encode(t);
}

std::string py_lower(const std::string& s) {
  std::u32string t = utf8_decode(s);
  for (char32_t& c : t) c = py_lower(c);
  return utf8_encode(t);
}

static bool is_cased(char32_t c) { return py_upper(c) != c || py_lower(c) != c; }

std::string py_title(const std::string& s) {
  std::u32string t = utf8_decode(s);
  bool prev_cased = false;
  for (char32_t& c : t) {
    c = prev_cased ? py_lower(c) : py_title_case(c);
    prev_cased = is_cased(c);
  }
  return utf8_encode(t);
}

std::string py_capitalize(const std::string& s) {
  std::u32string t = utf8_decode(s);
  for (size_t i = 0; i < t.size(); ++i) t[i] = i == 0 ? py_title_case(t[i]) : py_lower(t[i]);
  return utf8_encode(t);
}

}  // namespace hadron::chat
