// The endpoint handlers. Each reads its request under the context's limits and either fills
// the response or throws ApiError, which the HTTP layer turns into an error body.
#pragma once

#include <httplib.h>

#include "server/server_context.h"

namespace hadron::server {

void handle_completions(ServerContext& context, const httplib::Request& request,
                        httplib::Response& response);
void handle_chat_completions(ServerContext& context, const httplib::Request& request,
                             httplib::Response& response);
void handle_messages(ServerContext& context, const httplib::Request& request,
                     httplib::Response& response);
void handle_tokenize(ServerContext& context, const httplib::Request& request,
                     httplib::Response& response);
void handle_detokenize(ServerContext& context, const httplib::Request& request,
                       httplib::Response& response);
void handle_models(ServerContext& context, const httplib::Request& request,
                   httplib::Response& response);
void handle_health(ServerContext& context, const httplib::Request& request,
                   httplib::Response& response);
void handle_version(ServerContext& context, const httplib::Request& request,
                    httplib::Response& response);
void handle_metrics(ServerContext& context, const httplib::Request& request,
                    httplib::Response& response);

}  // namespace hadron::server
