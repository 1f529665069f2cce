// The part of tl::expected that silkworm's core headers name, as C++23's std::expected:
// silkworm takes tl-expected from its package manager, which a checkout does not carry.
#pragma once

#include <expected>
#include <utility>

namespace tl {

using std::expected;
using std::unexpected;

template <class E>
std::unexpected<E> make_unexpected(E e) {
    return std::unexpected<E>(std::move(e));
}

}  // namespace tl
