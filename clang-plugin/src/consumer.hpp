// The AST side of the plugin: applies each `#pragma sig` to the statement that follows it, before
// code generation sees the function (the consumer runs ahead of the main action's).
#pragma once

#include <clang/AST/ASTConsumer.h>
#include <memory>

namespace iosig::plugin {

class PluginState;

std::unique_ptr<clang::ASTConsumer> make_consumer(std::shared_ptr<PluginState> state);

} // namespace iosig::plugin
