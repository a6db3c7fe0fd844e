// YAML text -> Tree, built straight from yaml-cpp's parser events (no YAML::Node in between: that
// halves the cost of a load and lets aliases be checked as they are expanded). Keeps each value's
// file:line:col, turns every yaml-cpp exception into a located diagnostic, and rejects what
// yaml-cpp lets through silently: duplicate keys, alias cycles, alias bombs, several documents.
#include "node_yaml_internal.hpp"

#include <algorithm>
#include <exception>
#include <fmt/format.h>
#include <sstream>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace iosig::node_yaml_detail {
namespace {

// A node file has a few hundred values; these bounds only stop hostile input (nested aliases expand
// exponentially; chains of aliases nest arbitrarily deep).
constexpr std::size_t max_depth = 64;
constexpr std::size_t max_values = 200'000;

// Thrown out of the event handler to abandon a document that cannot become a tree.
struct Stop {
    SourceLocation where;
    std::string message;
};

// YAML text is Unicode; yaml-cpp passes invalid UTF-8 through on reading but replaces it on
// writing, so accepting it would make a path or label change on its way through to_yaml.
bool valid_utf8(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto byte = static_cast<unsigned char>(text[i]);
        std::size_t length = 0;
        std::uint32_t code = 0;
        if (byte < 0x80) {
            ++i;
            continue;
        } else if ((byte & 0xE0) == 0xC0) {
            length = 2;
            code = byte & 0x1F;
        } else if ((byte & 0xF0) == 0xE0) {
            length = 3;
            code = byte & 0x0F;
        } else if ((byte & 0xF8) == 0xF0) {
            length = 4;
            code = byte & 0x07;
        } else {
            return false;
        }
        if (i + length > text.size()) return false;
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80) return false;
            code = (code << 6) | (next & 0x3F);
        }
        const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
            return false;
        i += length;
    }
    return true;
}

std::size_t count_values(const Tree& tree) {
    std::size_t n = 1;
    for (const Tree& item : tree.items)
        n += count_values(item);
    for (const TreeEntry& entry : tree.entries)
        n += 1 + count_values(entry.value);
    return n;
}

class TreeBuilder final : public YAML::EventHandler {
public:
    TreeBuilder(std::string_view text, const std::string& file, Diagnostics& diagnostics)
        : text_(text), file_(file), diagnostics_(diagnostics) {}

    std::vector<YAML::Mark> document_starts;

    Tree take_root() { return std::move(root_); }

    SourceLocation at(const YAML::Mark& mark) const {
        if (mark.is_null() || mark.line < 0) return {file_, 0, 0};
        return {file_, mark.line + 1, mark.column + 1}; // yaml-cpp counts from 0
    }

    void OnDocumentStart(const YAML::Mark& mark) override { document_starts.push_back(mark); }
    void OnDocumentEnd() override {}

    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        if (ignoring()) return;
        count(1, mark);
        Tree tree;
        tree.where = at(mark);
        add(std::move(tree), anchor, 1);
    }

    void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        if (ignoring()) return;
        if (anchor == 0 || anchor > anchors_.size() || !anchors_[anchor - 1].complete)
            throw Stop{at(mark), "an alias inside the value it refers to (a cycle)"};
        const Anchored& anchored = anchors_[anchor - 1];
        if (stack_.size() + anchored.height > max_depth)
            throw Stop{at(mark), fmt::format("nesting deeper than {} levels", max_depth)};
        count(anchored.values, mark);
        add(Tree(anchored.tree), 0, anchored.height);
    }

    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& value) override {
        if (ignoring()) return;
        count(1, mark);
        Tree tree;
        tree.kind = Tree::Kind::scalar;
        tree.scalar = value;
        tree.tag = tag;
        tree.where = scalar_start(mark, tag);
        if (!valid_utf8(value)) {
            diagnostics_.error(tree.where, "text that is not valid UTF-8 (YAML files are UTF-8)");
            tree.scalar.clear();
        }
        add(std::move(tree), anchor, 1);
    }

    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        if (!ignoring()) open(Tree::Kind::sequence, mark, tag, anchor);
    }
    void OnSequenceEnd() override {
        if (!ignoring()) close();
    }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        if (!ignoring()) open(Tree::Kind::map, mark, tag, anchor);
    }
    void OnMapEnd() override {
        if (!ignoring()) close();
    }

private:
    struct Frame {
        Tree tree;
        YAML::anchor_t anchor = 0;
        std::size_t height = 1;
        bool have_key = false; // maps: the next value completes an entry
        Tree key;
    };
    struct Anchored {
        bool complete = false;
        Tree tree;
        std::size_t height = 0;
        std::size_t values = 0;
    };

    // Only the first document is built; later ones are only counted (and rejected).
    bool ignoring() const { return document_starts.size() > 1; }

    void count(std::size_t values, const YAML::Mark& mark) {
        values_ += values;
        if (values_ > max_values)
            throw Stop{at(mark), fmt::format("more than {} values (alias expansion?)", max_values)};
    }

    // yaml-cpp marks a tagged or quoted scalar at its tag or quote; diagnostics about the value (a
    // bad unit at offset 3) want the first character of the text itself.
    SourceLocation scalar_start(const YAML::Mark& mark, const std::string& tag) const {
        SourceLocation where = at(mark);
        if (where.line == 0 || mark.pos < 0) return where;
        std::size_t i = static_cast<std::size_t>(mark.pos);
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

    void open(Tree::Kind kind, const YAML::Mark& mark, const std::string& tag,
              YAML::anchor_t anchor) {
        if (stack_.size() >= max_depth)
            throw Stop{at(mark), fmt::format("nesting deeper than {} levels", max_depth)};
        count(1, mark);
        Frame frame;
        frame.tree.kind = kind;
        frame.tree.tag = tag;
        frame.tree.where = at(mark);
        frame.anchor = anchor;
        if (anchor != 0) anchors_.resize(std::max<std::size_t>(anchors_.size(), anchor));
        stack_.push_back(std::move(frame));
    }

    void close() {
        Frame frame = std::move(stack_.back());
        stack_.pop_back();
        add(std::move(frame.tree), frame.anchor, frame.height);
    }

    // Places a finished value: in the open sequence, as key or value of the open map, or as root.
    void add(Tree value, YAML::anchor_t anchor, std::size_t height) {
        if (anchor != 0) {
            anchors_.resize(std::max<std::size_t>(anchors_.size(), anchor));
            anchors_[anchor - 1] = {true, value, height, count_values(value)};
        }
        if (stack_.empty()) {
            root_ = std::move(value);
            return;
        }
        Frame& parent = stack_.back();
        parent.height = std::max(parent.height, height + 1);
        if (parent.tree.kind == Tree::Kind::sequence) {
            parent.tree.items.push_back(std::move(value));
            return;
        }
        if (!parent.have_key) {
            parent.key = std::move(value);
            parent.have_key = true;
            return;
        }
        parent.have_key = false;
        add_entry(parent.tree, std::move(parent.key), std::move(value));
    }

    void add_entry(Tree& map, Tree key, Tree value) {
        if (key.kind != Tree::Kind::scalar) {
            diagnostics_.error(key.where, "a key must be a plain name, not a list or map");
            return;
        }
        if (const TreeEntry* first = map.find(key.scalar)) {
            diagnostics_.error(key.where, fmt::format("duplicate key '{}' (first given at line {})",
                                                      key.scalar, first->key_where.line));
            return;
        }
        // An empty value (`key:`) is marked on the next line; the key is where it is written.
        if (value.kind == Tree::Kind::null) value.where = key.where;
        if (key.scalar == "calibration") value.yaml_text = tree_to_yaml(value);
        map.entries.push_back({std::move(key.scalar), key.where, std::move(value)});
    }

    std::string_view text_;
    const std::string& file_;
    Diagnostics& diagnostics_;
    std::vector<Frame> stack_;
    std::vector<Anchored> anchors_; // by anchor id - 1
    std::size_t values_ = 0;
    Tree root_;
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

} // namespace

bool parse_tree(std::string_view text, const std::string& file, Tree& out,
                Diagnostics& diagnostics) {
    TreeBuilder builder(text, file, diagnostics);
    const std::size_t errors_before = diagnostics.error_count();
    try {
        std::istringstream stream{std::string(text)};
        YAML::Parser parser(stream);
        // At most two documents are asked for: a second one is an error, and yaml-cpp 0.7 reports
        // input such as "," as endless empty documents that all start at the same place (its issue
        // #1040) — that is a syntax error at that character.
        while (builder.document_starts.size() < 2 && parser.HandleNextDocument(builder)) {
        }
        if (builder.document_starts.size() >= 2) {
            const YAML::Mark& first = builder.document_starts[0];
            const YAML::Mark& second = builder.document_starts[1];
            if (second.pos == first.pos) {
                const auto at = static_cast<std::size_t>(std::max(first.pos, 0));
                diagnostics.error(builder.at(first),
                                  "YAML syntax: unexpected " +
                                      (at < text.size() ? "'" + std::string(1, text[at]) + "'"
                                                        : std::string("end of file")));
            } else {
                diagnostics.error(builder.at(second), "a node file holds one YAML document; give "
                                                      "several files to layer them");
            }
            return false;
        }
        out = builder.take_root();
        if (out.kind == Tree::Kind::null) out.where = {file, 1, 1};
        return diagnostics.error_count() == errors_before;
    } catch (const Stop& e) {
        diagnostics.error(e.where, e.message);
    } catch (const YAML::Exception& e) {
        diagnostics.error(builder.at(e.mark), "YAML syntax: " + e.msg + tab_hint(text, e.mark));
    } catch (const std::exception& e) {
        diagnostics.error({file, 0, 0}, std::string("cannot parse: ") + e.what());
    } catch (...) {
        diagnostics.error({file, 0, 0}, "cannot parse: unknown error");
    }
    return false;
}

} // namespace iosig::node_yaml_detail
