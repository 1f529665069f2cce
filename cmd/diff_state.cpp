#include "diff_state.hpp"

#include "common.hpp"
#include "progress.hpp"
#include "state_print.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/ops/state_diff.hpp>
#include <mpt/state/document.hpp>

#include <fmt/core.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace mpt::cli {
namespace {

// The temporary folders of the two sides, named for the signal handler: a diff stopped by
// Ctrl-C, kill, a closed terminal or a closed pipe removes them as one that ends does.
char g_temp_dirs[2][4096];
constexpr const char* kTempFiles[] = {"/state.db", "/state.db-wal", "/state.db-shm"};

void remove_temp_dir(const char* dir) noexcept {
    if (dir[0] == '\0') return;
    char name[sizeof g_temp_dirs[0] + 16];
    for (const char* f : kTempFiles) {
        std::snprintf(name, sizeof name, "%s%s", dir, f);
        ::unlink(name);
    }
    ::rmdir(dir);
}

void remove_temp_dirs_and_stop(int sig) {
    for (const char* dir : g_temp_dirs) remove_temp_dir(dir);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// One side: a state file opened for reading, or a document built into a temporary state
// file (written whole, as build --state writes a new file) that goes with the side.
struct StateSide {
    std::unique_ptr<NodeStore> store;
    std::optional<StateView> view;
    bool reading = false;
    std::string temp_dir;       // holds the temporary file, when there is one
    char* temp_slot = nullptr;  // its name for the signal handler

    StateSide() = default;
    StateSide(StateSide&& o) noexcept
        : store(std::move(o.store)),
          view(std::move(o.view)),
          reading(o.reading),
          temp_dir(std::move(o.temp_dir)),
          temp_slot(o.temp_slot) {
        o.reading = false;
        o.temp_dir.clear();
        o.temp_slot = nullptr;
    }
    ~StateSide() {
        if (reading && store) store->end_read();
        store.reset();
        if (temp_slot != nullptr) {
            remove_temp_dir(temp_slot);
            temp_slot[0] = '\0';
        }
    }

    // Makes the temporary folder and names it for the signal handler.
    Status make_temp_dir() {
        const char* tmp = std::getenv("TMPDIR");
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/mpt-diff-XXXXXX";
        if (dir.size() >= sizeof g_temp_dirs[0]) {
            return Error{Errc::storage_io, dir + ": the temporary folder's name is too long"};
        }
        char* slot = g_temp_dirs[0][0] == '\0' ? g_temp_dirs[0] : g_temp_dirs[1];
        MPT_ASSERT(slot[0] == '\0');
        // Named before it exists: a signal between the two finds nothing to remove.
        std::memcpy(slot, dir.c_str(), dir.size() + 1);
        if (::mkdtemp(slot) == nullptr) {
            const int e = errno;
            slot[0] = '\0';
            return Error{Errc::storage_io,
                         dir + ": cannot make a temporary folder: " + std::strerror(e)};
        }
        temp_slot = slot;
        temp_dir = slot;
        return {};
    }
};

// Preimages of address and slot hashes, from either side's preimages table (a document's
// built file records those the document gives).
class Preimages {
public:
    void add(NodeStore& store) { stores_.push_back(&store); }

    // The preimage of h when one side knows it.
    Result<std::optional<bytes>> find(const Hash256& h) const {
        for (NodeStore* s : stores_) {
            MPT_TRY(std::optional<bytes> p, s->get_preimage(h));
            if (p) return p;
        }
        return std::optional<bytes>{};
    }

private:
    std::vector<NodeStore*> stores_;
};

// An error of one side, named by the side's file; a store error about another file (the
// temporary one) keeps that file's name after it.
Error side_error(Error e, const std::string& path) {
    const bool other = !e.file.empty() && e.file != path;
    return Error{e.code, path + ": " + (other ? e.file + ": " : std::string()) + e.detail};
}

Result<StateSide> open_side(const std::string& path, Preimages& pre) {
    StateSide side;
    if (path != "-" && looks_like_sqlite(path)) {
        MPT_TRY(auto store, SqliteNodeStore::open(path, SqliteNodeStore::Mode::read_only));
        MPT_RETURN_IF_ERROR(store->begin_read());
        side.reading = true;
        side.store = std::move(store);
        auto view = StateView::open(*side.store);
        if (!view) return side_error(std::move(view).error(), path);
        side.view = std::move(*view);
        pre.add(*side.store);
        return side;
    }
    MPT_TRY(const StateDoc doc, read_state_document(path, available_cpus()));
    StateBuildOptions b;
    b.threads = available_cpus();
    MPT_RETURN_IF_ERROR(side.make_temp_dir());
    const std::string file = side.temp_dir + "/state.db";
    // Into a temporary file, whole; the store's way (in memory) only when that way is closed.
    auto whole = build_new_state_file(file, doc, b);
    if (!whole) return side_error(std::move(whole).error(), path);
    if (*whole) {
        MPT_TRY(auto store, SqliteNodeStore::open(file, SqliteNodeStore::Mode::read_only));
        MPT_RETURN_IF_ERROR(store->begin_read());
        side.reading = true;
        side.store = std::move(store);
    } else {
        side.store = std::make_unique<MemoryNodeStore>();
        auto r = build_state(*side.store, doc, b);
        if (!r) return side_error(std::move(r).error(), path);
    }
    pre.add(*side.store);
    MPT_TRY(StateView view, StateView::open(*side.store));
    side.view = std::move(view);
    return side;
}

const char* change_name(DiffEntry::Kind k) {
    return k == DiffEntry::Kind::added     ? "added"
           : k == DiffEntry::Kind::removed ? "removed"
                                           : "changed";
}
const char* change_sign(DiffEntry::Kind k) {
    return k == DiffEntry::Kind::added ? "+" : k == DiffEntry::Kind::removed ? "-" : "~";
}

std::string nonce_quantity(uint64_t n) {
    uint8_t be[8];
    for (int i = 0; i < 8; ++i) be[i] = static_cast<uint8_t>(n >> (8 * (7 - i)));
    return quantity_text(be);
}

struct Field {
    const char* name;
    std::string old_value, new_value;
};

std::vector<Field> changed_fields(const Account& a, const Account& b) {
    std::vector<Field> out;
    if (a.nonce != b.nonce)
        out.push_back({"nonce", nonce_quantity(a.nonce), nonce_quantity(b.nonce)});
    if (a.balance != b.balance)
        out.push_back({"balance", quantity_text(a.balance), quantity_text(b.balance)});
    if (a.storage_root != b.storage_root) {
        out.push_back({"storageRoot", to_hex(a.storage_root), to_hex(b.storage_root)});
    }
    if (a.code_hash != b.code_hash)
        out.push_back({"codeHash", to_hex(a.code_hash), to_hex(b.code_hash)});
    return out;
}

void put_line(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

}  // namespace

bool is_state_file(const std::string& path) {
    if (path == "-" || !looks_like_sqlite(path)) return false;
    auto store = SqliteNodeStore::open(path, SqliteNodeStore::Mode::read_only);
    if (!store) return false;
    auto t = (*store)->find_trie("main");
    return t && *t && (*t)->kind == TrieKind::state;
}

void print_nodes_read(uint64_t a, uint64_t b) {
    // Prefixed as every line mpt writes to stderr, and quiet under -q as root's --stats.
    if (!quiet()) eprint("mpt: stats: nodes read: A {}, B {}\n", a, b);
}

int run_state_diff(const StateDiffOptions& o) {
    // Ctrl-C, kill, a closed terminal and a closed pipe remove the temporary files as a
    // return does (the handlers go after the sides, declared below them).
    const SignalHandlers handlers({SIGINT, SIGTERM, SIGHUP, SIGPIPE}, remove_temp_dirs_and_stop);
    Preimages pre;
    ProgressLine progress("diff", o.a + ": reading", /*streamed=*/true);
    auto a = open_side(o.a, pre);
    if (!a) return report(a.error());
    progress.phase(o.b + ": reading");
    auto b = open_side(o.b, pre);
    if (!b) return report(b.error());
    progress.phase(o.a + " and " + o.b);
    progress.count({&a->store->rows_read(), &b->store->rows_read()}, "rows read");
    if (o.verify) {
        if (auto s = verify_state(*a->view); !s) return report(s.error(), o.a);
        if (auto s = verify_state(*b->view); !s) return report(s.error(), o.b);
    }

    size_t changes = 0;
    Status failed;
    std::string line;
    // The address or slot (or, without its preimage, the hash) of a key, as "name":"0x.." in
    // JSON, where the name tells which.
    auto who = [&](const Hash256& h, const char* known, const char* unknown) -> std::string {
        auto p = pre.find(h);
        if (!p) {
            failed = Status(p.error());
            return {};
        }
        // Without its preimage: pre(0x<hash>), as geth's dump names such an account.
        if (!o.json) return *p ? to_hex(**p) : "pre(" + to_hex(h) + ")";
        return std::string("\"") + (*p ? known : unknown) + "\":\"" +
               (*p ? to_hex(**p) : to_hex(h)) + '"';
    };
    StateDiffVisitor v;
    v.account = [&](const AccountChange& c) {
        ++changes;
        const std::string id = who(c.address_hash, "address", "key");
        if (!failed.ok()) return false;
        if (o.json) {
            line = std::string("{\"change\":\"") + change_name(c.kind) + "\"," + id;
            if (c.kind == DiffEntry::Kind::changed) {
                for (const Field& f : changed_fields(*c.old_account, *c.new_account)) {
                    line += std::string(",\"") + f.name + "\":[\"" + f.old_value + "\",\"" +
                            f.new_value + "\"]";
                }
            } else {
                line += ',';
                append_account_fields(line, c.old_account ? *c.old_account : *c.new_account);
            }
            line += "}\n";
        } else {
            line = std::string(change_sign(c.kind)) + " " + id;
            if (c.kind == DiffEntry::Kind::changed) {
                const char* sep = " ";
                for (const Field& f : changed_fields(*c.old_account, *c.new_account)) {
                    line += std::string(sep) + f.name + " " + f.old_value + " -> " + f.new_value;
                    sep = ", ";
                }
            } else {
                const Account& acc = c.old_account ? *c.old_account : *c.new_account;
                line += " nonce " + nonce_quantity(acc.nonce) + ", balance " +
                        quantity_text(acc.balance) + ", storageRoot " + to_hex(acc.storage_root) +
                        ", codeHash " + to_hex(acc.code_hash);
            }
            line += '\n';
        }
        put_line(line);
        return true;
    };
    v.slot = [&](const SlotChange& c) {
        ++changes;
        const std::string id = who(c.address_hash, "address", "key");
        const std::string slot = who(c.slot_hash, "slot", "slotKey");
        if (!failed.ok()) return false;
        const std::string old_v = c.old_value ? quantity_text(*c.old_value) : std::string();
        const std::string new_v = c.new_value ? quantity_text(*c.new_value) : std::string();
        if (o.json) {
            line = std::string("{\"change\":\"") + change_name(c.kind) + "\"," + id + "," + slot;
            if (c.old_value) line += ",\"old\":\"" + old_v + '"';
            if (c.new_value) line += ",\"new\":\"" + new_v + '"';
            line += "}\n";
        } else {
            line = std::string(change_sign(c.kind)) + " " + id + " slot " + slot + " ";
            line += c.kind == DiffEntry::Kind::changed ? old_v + " -> " + new_v
                    : c.old_value                      ? old_v
                                                       : new_v;
            line += '\n';
        }
        put_line(line);
        return true;
    };
    // Slots a side does not hold (a dump of storage roots only) are said to be so, never
    // shown as added or removed.
    v.slots_unknown = [&](const SlotsUnknown& u) {
        const std::string id = who(u.address_hash, "address", "key");
        if (!failed.ok()) return false;
        const char* sides = u.missing_a && u.missing_b ? "A and B" : u.missing_a ? "A" : "B";
        if (o.json) {
            line = std::string("{\"change\":\"slots-unknown\",") + id + ",\"missing\":[" +
                   (u.missing_a ? "\"A\"" : "") + (u.missing_a && u.missing_b ? "," : "") +
                   (u.missing_b ? "\"B\"" : "") + "]}\n";
        } else {
            line = "? " + id + " slots not compared: " + sides +
                   (u.missing_a && u.missing_b ? " give the storage root without their slots\n"
                                               : " gives the storage root without its slots\n");
        }
        put_line(line);
        return true;
    };
    auto r = diff_states(*a->view, *b->view, v);
    if (!r) return report(r.error());
    if (!failed.ok()) return report(failed.error());
    progress.stop();
    if (o.stats) print_nodes_read(r->nodes_read_a, r->nodes_read_b);
    return changes == 0 ? kOk : kNegative;
}

}  // namespace mpt::cli
