// YAML text -> Tree: yaml-cpp does the parsing; this keeps each value's file:line:col, turns every
// yaml-cpp exception into a located diagnostic and rejects what yaml-cpp lets through silently
// (duplicate keys, alias cycles, alias bombs, several documents).
#include <algorithm>
#include <exception>
#include <sstream>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "node_yaml_internal.hpp"

namespace iosig::node_yaml_detail {
namespace {

// A node file has a few hundred values; these bounds only stop hostile input (an alias referring to
// its own ancestor makes yaml-cpp build a cyclic graph; nested aliases expand exponentially).
constexpr int max_depth = 64;
constexpr std::size_t max_values = 200'000;

struct TooLarge {
    SourceLocation where;
    std::string message;
};

class Converter {
public:
    Converter(std::string_view text, const std::string& file) : text_(text), file_(file) {}

    SourceLocation at(const YAML::Mark& mark) const {
        if (mark.is_null() || mark.line < 0) return {file_, 0, 0};
        return {file_, mark.line + 1, mark.column + 1};  // yaml-cpp counts from 0
    }

    // yaml-cpp marks a tagged or quoted scalar at its tag or quote; diagnostics about the value (a
    // bad unit at offset 3) want the first character of the text itself.
    SourceLocation scalar_start(const YAML::Node& node) const {
        const YAML::Mark mark = node.Mark();
        SourceLocation where = at(mark);
        if (where.line == 0 || mark.pos < 0) return where;
        std::size_t i = static_cast<std::size_t>(mark.pos);
        const std::string& tag = node.Tag();
        const auto advance = [&] {
            if (text_[i] == '\n') {
                ++where.line;
                where.column = 1;
            } else {
                ++where.column;
            }
            ++i;
        };
        if (tag != "?" && tag != "!" && i < text_.size() && text_[i] == '!') {
            while (i < text_.size() && text_[i] != ' ' && text_[i] != '\t' && text_[i] != '\n')
                advance();
            while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n'))
                advance();
        }
        if (i < text_.size() && (text_[i] == '"' || text_[i] == '\'')) advance();
        return where;
    }

    Tree convert(const YAML::Node& node, int depth, Diagnostics& diagnostics) {
        if (depth > max_depth)
            throw TooLarge{at(node.Mark()), fmt::format("nesting deeper than {} levels (an alias that "
                                                        "refers to its own ancestor?)",
                                                        max_depth)};
        if (++values_ > max_values)
            throw TooLarge{at(node.Mark()),
                           fmt::format("more than {} values (alias expansion?)", max_values)};
        Tree tree;
        tree.tag = node.Tag();
        tree.where = at(node.Mark());
        switch (node.Type()) {
        case YAML::NodeType::Undefined:
        case YAML::NodeType::Null:
            tree.kind = Tree::Kind::null;
            break;
        case YAML::NodeType::Scalar:
            tree.kind = Tree::Kind::scalar;
            tree.scalar = node.Scalar();
            tree.where = scalar_start(node);
            break;
        case YAML::NodeType::Sequence:
            tree.kind = Tree::Kind::sequence;
            for (const YAML::Node& item : node) tree.items.push_back(convert(item, depth + 1, diagnostics));
            break;
        case YAML::NodeType::Map:
            tree.kind = Tree::Kind::map;
            for (auto it = node.begin(); it != node.end(); ++it) {
                const SourceLocation key_where = at(it->first.Mark());
                if (!it->first.IsScalar()) {
                    diagnostics.error(key_where, "a key must be a plain name, not a list or map");
                    continue;
                }
                const std::string& key = it->first.Scalar();
                if (const TreeEntry* first = tree.find(key)) {
                    diagnostics.error(key_where, fmt::format("duplicate key '{}' (first given at line {})",
                                                             key, first->key_where.line));
                    continue;
                }
                TreeEntry entry{key, key_where, convert(it->second, depth + 1, diagnostics)};
                // An empty value (`key:`) is marked on the next line; the key is where it is written.
                if (entry.value.kind == Tree::Kind::null) entry.value.where = key_where;
                if (key == "calibration") entry.value.yaml_text = YAML::Dump(it->second);
                tree.entries.push_back(std::move(entry));
            }
            break;
        }
        return tree;
    }

private:
    std::string_view text_;
    const std::string& file_;
    std::size_t values_ = 0;
};

// yaml-cpp's message for a tab in indentation ("end of map not found") does not say what is wrong.
std::string tab_hint(std::string_view text, const YAML::Mark& mark) {
    if (mark.line < 0) return {};
    std::size_t begin = 0;
    for (int line = 0; line < mark.line && begin != std::string_view::npos; ++line) {
        begin = text.find('\n', begin);
        if (begin != std::string_view::npos) ++begin;
    }
    if (begin == std::string_view::npos) return {};
    for (std::size_t i = begin; i < text.size() && (text[i] == ' ' || text[i] == '\t'); ++i)
        if (text[i] == '\t') return " (indentation must use spaces, not tabs)";
    return {};
}

// Records where each document starts; the events themselves are not needed.
class DocumentStarts final : public YAML::EventHandler {
public:
    std::vector<YAML::Mark> marks;
    void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

// Rejects files with several documents. Not YAML::LoadAll: in yaml-cpp 0.7 it never returns on
// input such as "," (the parser reports an empty document without consuming the token, forever;
// yaml-cpp issue #1040). Here at most two documents are asked for, and a second one that starts
// where the first did is that stuck parser: a syntax error at that character.
bool single_document(std::string_view text, const Converter& converter, Diagnostics& diagnostics) {
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    DocumentStarts starts;
    while (starts.marks.size() < 2 && parser.HandleNextDocument(starts)) {
    }
    if (starts.marks.size() < 2) return true;
    const YAML::Mark& first = starts.marks[0];
    const YAML::Mark& second = starts.marks[1];
    if (second.pos == first.pos) {
        const std::size_t at = static_cast<std::size_t>(std::max(first.pos, 0));
        const std::string what = at < text.size() ? "'" + std::string(1, text[at]) + "'" : "end of file";
        diagnostics.error(converter.at(first), "YAML syntax: unexpected " + what);
    } else {
        diagnostics.error(converter.at(second),
                          "a node file holds one YAML document; give several files to layer them");
    }
    return false;
}

} // namespace

bool parse_tree(std::string_view text, const std::string& file, Tree& out, Diagnostics& diagnostics) {
    Converter converter(text, file);
    try {
        if (!single_document(text, converter, diagnostics)) return false;
        const YAML::Node document = YAML::Load(std::string(text));
        const std::size_t errors_before = diagnostics.error_count();
        out = converter.convert(document, 0, diagnostics);
        const bool ok = diagnostics.error_count() == errors_before;
        if (out.kind == Tree::Kind::null) out.where = {file, 1, 1};
        return ok;
    } catch (const TooLarge& e) {
        diagnostics.error(e.where, e.message);
    } catch (const YAML::Exception& e) {
        diagnostics.error(converter.at(e.mark), "YAML syntax: " + e.msg + tab_hint(text, e.mark));
    } catch (const std::exception& e) {
        diagnostics.error({file, 0, 0}, std::string("cannot parse: ") + e.what());
    } catch (...) {
        diagnostics.error({file, 0, 0}, "cannot parse: unknown error");
    }
    return false;
}

} // namespace iosig::node_yaml_detail
