#include <mpt/witness/check.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/nibbles.hpp>
#include <mpt/core/node.hpp>
#include <mpt/state/account.hpp>
#include <mpt/trie/task_pool.hpp>
#include <mpt/witness/apply.hpp>
#include <mpt/witness/detail/check_nodes.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <thread>
#include <tuple>

namespace mpt {
namespace {

using witness_detail::Entry;
using witness_detail::Leaf;
using witness_detail::Nodes;
using witness_detail::resolve_keys;

enum Trie : int { kMain = 0, kStorage = 1 };

// A node's path from its trie's root, two nibbles a byte (zero past size); kTooDeep past 64
// nibbles, where no 32-byte key ends. Unlike Nibbles (one nibble a byte, a heap buffer past
// 64), it is trivially copied with each step of the walk and is the leaf's key as it stands.
struct WalkPath {
    static constexpr uint8_t kTooDeep = UINT8_MAX;
    std::array<uint8_t, 32> packed{};
    uint8_t size = 0;

    WalkPath plus(uint8_t nibble) const noexcept {
        WalkPath p = *this;
        p.append(nibble);
        return p;
    }
    WalkPath plus(NibbleView more) const noexcept {
        WalkPath p = *this;
        if (size + more.size() > 64) {  // kTooDeep too
            p.size = kTooDeep;
            return p;
        }
        for (size_t i = 0; i < more.size(); ++i) p.append(more[i]);
        return p;
    }

private:
    void append(uint8_t nibble) noexcept {
        if (size >= 64) {
            size = kTooDeep;
            return;
        }
        packed[size / 2] |= (size & 1) != 0 ? nibble : static_cast<uint8_t>(nibble << 4);
        ++size;
    }
};

// Where a walk stands: the kind of trie, the listing of its root, the listing of the nearest
// listed node above (or the node itself, once visited), and the path.
struct Place {
    Trie t = kMain;
    uint32_t root = Entry::kNoParent;
    uint32_t parent = Entry::kNoParent;
    WalkPath path;
};

// A walk of the tries, or its share of one: every node under the steps it is given, and for
// the account trie every storage trie of the accounts it reaches. A node is looked up when
// its parent is decoded, all of a branch's children together (their loads overlap), and
// visited from the stack later. The leaves it reaches at whole paths it keeps for the keys.
class Walker {
public:
    explicit Walker(Nodes& nodes) : nodes_(&nodes) {}

    // Stacks the root of the account trie.
    void start(const Hash256& root) {
        const bytes_view ref(root.data(), root.size());
        const size_t i = nodes_->index.find(root);
        Place at;
        if (i != NodeIndex::kNone) at.root = static_cast<uint32_t>(i);
        push({&ref, 1}, at, nullptr);
    }

    // Visits nodes until the stack is empty or holds at least until steps.
    void run(size_t until = SIZE_MAX) {
        while (!stack_.empty() && stack_.size() < until) {
            const Step s = stack_.back();
            stack_.pop_back();
            visit(s);
        }
    }

    // Deals the steps stacked here among walkers (this one among them), in turn.
    void share(std::vector<Walker>& walkers) {
        std::vector<Step> steps = std::move(stack_);
        stack_.clear();
        for (size_t i = 0; i < steps.size(); ++i) {
            walkers[i % walkers.size()].stack_.push_back(steps[i]);
        }
    }

    // Adds what this walker found to out: counts, accounts that do not decode, the storage
    // roots found, the accounts' code hashes, the leaves.
    void add_to(WitnessCheck& out, std::vector<Hash256>& storage_roots,
                std::vector<Hash256>& code_hashes, std::vector<Leaf>& leaves) const {
        out.accounts += accounts_;
        out.slots += slots_;
        out.bad_accounts.insert(out.bad_accounts.end(), bad_accounts_.begin(), bad_accounts_.end());
        storage_roots.insert(storage_roots.end(), storage_roots_.begin(), storage_roots_.end());
        code_hashes.insert(code_hashes.end(), code_hashes_.begin(), code_hashes_.end());
        leaves.insert(leaves.end(), leaves_.begin(), leaves_.end());
    }

private:
    // A node to visit: a listed one, or one embedded in its parent.
    struct Step {
        Entry* entry;
        bytes_view embedded;
        Place at;
    };

    // Stacks the nodes refs name that a walk of kind from.t has not reached yet, each at
    // from.path plus its nibble (nibbles: none, the same path). links, when given, gets each
    // ref's link (Nodes::links).
    void push(std::span<const bytes_view> refs, const Place& from, const uint8_t* nibbles,
              uint32_t* links = nullptr) {
        for (const bytes_view r : refs) {
            if (r.size() == 32) nodes_->index.prefetch(hash_of(r));
        }
        for (size_t i = 0; i < refs.size(); ++i) {
            const bytes_view r = refs[i];
            if (links != nullptr) links[i] = Nodes::kUnlinked;
            Place at = from;
            if (nibbles != nullptr) at.path = from.path.plus(nibbles[i]);
            if (r.size() != 32) {
                stack_.push_back({nullptr, r, at});
                continue;
            }
            Entry* e = nodes_->find(hash_of(r));
            if (e != nullptr && links != nullptr) links[i] = e->index;
            if (e == nullptr) continue;
            if (std::atomic_ref(e->reached[at.t]).exchange(true, std::memory_order_relaxed)) {
                continue;
            }
            e->parent[at.t] = from.parent;
            __builtin_prefetch(e->rlp.data());
            stack_.push_back({e, {}, at});
        }
    }

    void visit(const Step& s) {
        Place here = s.at;
        if (s.entry == nullptr) {
            const auto v = decode_node(s.embedded);
            if (!v) return;  // an embedded node: its parent's decoding checked it
            return follow(*v, here, s.embedded, nullptr);
        }
        Entry& e = *s.entry;
        here.parent = e.index;
        const bool first = !std::atomic_ref(e.taken).exchange(true, std::memory_order_relaxed);
        const auto v = decode_node(e.rlp);
        if (!v) {
            if (first) {
                e.decodes = Entry::Decodes::no;
                e.reason = v.error().message();
                nodes_->links_at[e.index] = Nodes::kUndecodable;
            }
            return;
        }
        if (first) e.decodes = Entry::Decodes::yes;
        follow(*v, here, nodes_->hashes[e.index], first ? &e : nullptr);
    }

    // ref: the node's hash, or the node itself where it is embedded; e: its listing, when
    // this walker has taken it.
    void follow(const NodeView& v, const Place& here, bytes_view ref, Entry* e) {
        switch (v.kind) {
            case NodeView::Kind::leaf:
                leaf(v.value, here, v.path, ref);
                break;
            case NodeView::Kind::extension: {
                Place below = here;
                below.path = here.path.plus(v.path);
                push({&v.child, 1}, below, nullptr);
                break;
            }
            case NodeView::Kind::branch: {
                bytes_view children[16];
                uint8_t nibble[16];
                size_t n = 0;
                for (uint8_t i = 0; i < 16; ++i) {
                    if (v.children[i].empty()) continue;
                    nibble[n] = i;
                    children[n++] = v.children[i];
                }
                if (e == nullptr) {
                    push({children, n}, here, nibble);
                } else {
                    uint32_t found[16];
                    push({children, n}, here, nibble, found);
                    const uint32_t at = nodes_->add_links();
                    for (size_t i = 0; i < n; ++i) nodes_->links[at + nibble[i]] = found[i];
                    nodes_->links_at[e->index] = at;
                }
                if (!v.value.empty()) leaf(v.value, here, {}, ref);
                break;
            }
        }
    }

    // A value at here.path plus rest.
    void leaf(bytes_view value, const Place& here, NibbleView rest, bytes_view ref) {
        // Every node visited is under a listed root (an unlisted one stacks nothing).
        MPT_ASSERT(here.root != Entry::kNoParent);
        if (here.path.size + rest.size() == 64) {
            const WalkPath key = here.path.plus(rest);
            leaves_.push_back(
                {key.packed, here.root, here.parent, static_cast<uint8_t>(here.t), value});
        }
        if (here.t == kStorage) {
            ++slots_;
            return;
        }
        ++accounts_;
        const auto a = decode_account(value);
        if (!a) {
            UndecodableNode bad;
            bad.hash = ref.size() == 32 ? hash_of(ref) : keccak256(ref);
            const Entry* e = nodes_->find(bad.hash);
            bad.index = e == nullptr ? 0 : e->index;
            bad.reason = "an account trie leaf whose value is no account: " + a.error().message();
            bad_accounts_.push_back(std::move(bad));
            return;
        }
        code_hashes_.push_back(a->code_hash);
        if (a->storage_root == kEmptyRoot) return;
        const size_t i = nodes_->index.find(a->storage_root);
        if (i == NodeIndex::kNone) return;
        storage_roots_.push_back(a->storage_root);
        const bytes_view storage_root(nodes_->hashes[i].data(), 32);
        Place at;
        at.t = kStorage;
        at.root = static_cast<uint32_t>(i);
        push({&storage_root, 1}, at, nullptr);
    }

    static Hash256 hash_of(bytes_view ref) {
        Hash256 h;
        std::memcpy(h.data(), ref.data(), 32);
        return h;
    }

    Nodes* nodes_;
    std::vector<Step> stack_;
    size_t accounts_ = 0;
    size_t slots_ = 0;
    std::vector<UndecodableNode> bad_accounts_;
    std::vector<Hash256> storage_roots_;  // held in the witness
    std::vector<Hash256> code_hashes_;
    std::vector<Leaf> leaves_;
};

// Walks the tries from out.root into out (counts, accounts that do not decode, in listed
// order) and the nodes' entries: on this thread until the stack holds enough for several,
// then on up to four, each with its share of the stack. Returns the accounts' code hashes,
// sorted.
std::vector<Hash256> walk_tries(Nodes& nodes, WitnessCheck& out) {
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    std::vector<Walker> walkers(threads, Walker(nodes));
    walkers[0].start(out.root);
    walkers[0].run(4 * threads);  // the account trie's root has up to 16 children
    walkers[0].share(walkers);
    run_tasks(threads, threads, [&](size_t w, unsigned) { walkers[w].run(); });
    std::vector<Hash256> storage_roots;
    std::vector<Hash256> code_hashes;
    std::vector<Leaf> leaves;
    for (const Walker& w : walkers) w.add_to(out, storage_roots, code_hashes, leaves);
    nodes.leaves.assign(std::move(leaves));
    std::sort(storage_roots.begin(), storage_roots.end());
    out.storage_tries = static_cast<size_t>(
        std::unique(storage_roots.begin(), storage_roots.end()) - storage_roots.begin());
    std::sort(out.bad_accounts.begin(), out.bad_accounts.end(),
              [](const UndecodableNode& a, const UndecodableNode& b) {
                  return std::tie(a.index, a.hash, a.reason) < std::tie(b.index, b.hash, b.reason);
              });
    std::sort(code_hashes.begin(), code_hashes.end());
    code_hashes.erase(std::unique(code_hashes.begin(), code_hashes.end()), code_hashes.end());
    return code_hashes;
}

}  // namespace

size_t WitnessCheck::unresolved() const noexcept {
    return static_cast<size_t>(std::count_if(keys.begin(), keys.end(), [](const WitnessKey& k) {
        return k.status == WitnessKey::Status::unresolved;
    }));
}

std::string_view node_class_name(NodeClass c) noexcept {
    switch (c) {
        case NodeClass::key_path:
            return "key path";
        case NodeClass::absence_proof:
            return "absence proof";
        case NodeClass::changes:
            return "changes";
        case NodeClass::reached:
            return "reached";
        case NodeClass::superfluous:
            return "superfluous";
        case NodeClass::undecodable:
            break;
    }
    return "undecodable";
}

namespace {

// Walks the tries from root, sorts the listed nodes and codes by what the walk found, and
// resolves the keys.
void walk_and_resolve(const Witness& w, WitnessCheck& out, Nodes& nodes) {
    const std::vector<Hash256> code_hashes = walk_tries(nodes, out);
    // The nodes no walk decoded are decoded here: superfluous, or no node at all.
    for (size_t i = 0; i < w.state.size(); ++i) {
        const Hash256& h = nodes.hashes[i];
        if (nodes.index.first(i) != i) continue;
        Entry& e = nodes.entries[i];
        if (e.decodes == Entry::Decodes::unknown) {
            const auto v = decode_node(e.rlp);
            e.decodes = v ? Entry::Decodes::yes : Entry::Decodes::no;
            if (!v) e.reason = v.error().message();
        }
        if (e.decodes == Entry::Decodes::no) {
            out.undecodable.push_back({i, h, e.reason});
        } else if (e.reached[kMain] || e.reached[kStorage]) {
            ++out.reached;
        } else {
            out.superfluous.push_back(h);
        }
    }

    out.codes = w.codes.size();
    for (const bytes& code : w.codes) {
        const Hash256 h = keccak256(code);
        if (std::binary_search(code_hashes.begin(), code_hashes.end(), h)) {
            ++out.codes_matched;
        } else {
            out.codes_unmatched.push_back(h);
        }
    }
    resolve_keys(w, out, nodes);
}

// Applies changes to the tries of w (indexed by index) into out's post_root or
// changes_error; the hashes of the nodes they read go to read.
void apply_to(const Witness& w, const NodeIndex& index, const ChangesDoc& changes,
              WitnessCheck& out, std::vector<Hash256>& read) {
    WitnessTries tries(w, index);
    tries.note_found(&read);
    auto applied = apply_changes(tries, out.root, changes);
    if (applied) {
        out.post_root = applied->root;
        return;
    }
    if (applied.error().code == Errc::storage_missing_node) out.changes_missing = tries.missing();
    out.changes_error = applied.error();
}

}  // namespace

WitnessCheck check_witness(const Witness& w, const Hash256& root, const ChangesDoc* changes) {
    WitnessCheck out;
    out.root = root;
    out.nodes = w.state.size();
    out.hashes = node_hashes(w.state);
    Nodes nodes(w, out.hashes);
    out.duplicated = nodes.index.duplicated();

    // The changes read the index alone, the walk and the keys the nodes' entries too: the
    // two go on side by side (the apply is a quarter of a check's time).
    std::vector<Hash256> read_by_changes;
    const size_t tasks = changes != nullptr ? 2 : 1;
    run_tasks(static_cast<unsigned>(tasks), tasks, [&](size_t task, unsigned) {
        if (task == 0) {
            walk_and_resolve(w, out, nodes);
        } else {
            apply_to(w, nodes.index, *changes, out, read_by_changes);
        }
    });
    // The first listings of the nodes the changes read.
    std::vector<bool> by_changes(w.state.size());
    for (const Hash256& h : read_by_changes) by_changes[nodes.index.find(h)] = true;
    out.classes.reserve(w.state.size());
    for (size_t i = 0; i < w.state.size(); ++i) {
        const Entry& e = nodes.entries[nodes.index.first(i)];
        NodeClass c = NodeClass::superfluous;
        if (e.decodes == Entry::Decodes::no) {
            c = NodeClass::undecodable;
        } else if (e.on_path) {
            c = NodeClass::key_path;
        } else if (e.on_absence) {
            c = NodeClass::absence_proof;
        } else if (by_changes[nodes.index.first(i)]) {
            c = NodeClass::changes;
        } else if (e.reached[kMain] || e.reached[kStorage]) {
            c = NodeClass::reached;
        }
        out.classes.push_back(c);
    }
    return out;
}

}  // namespace mpt
