#include "chat/template.h"

#include "chat/interpreter.h"
#include "chat/parser.h"
#include "chat/value_json.h"

namespace hadron::chat {

ChatTemplate ChatTemplate::parse(const std::string& source) {
  ChatTemplate t;
  t.body_ = std::make_shared<const Body>(parse_template(source));
  return t;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& context,
                                 const RenderOptions& options) const {
  Interpreter interpreter(options, value_from_json(context));
  return interpreter.render(*body_);
}

}  // namespace hadron::chat
