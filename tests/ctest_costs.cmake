# Read by ctest after the unit cases are listed (CMakeLists.txt): the longest unit cases start
# first, beside the longest script tests, so that ctest -j keeps every core busy to the end.
# A name that no longer matches a case stops ctest with an error naming it.
set_tests_properties(
    "unit/spill: a new trie file built from spilled runs is the in-memory build's, byte for byte"
    "unit/spill: a sort of runs of a few keys gives the in-memory path's final pairs"
    "unit/spill: a build split at depth 2 is the in-memory build's, byte for byte"
    "unit/fault injection: a build split two nibbles down fails each temporary write in turn"
    "unit/fault injection: failed writes of temporary files, in turn, leave nothing behind"
    PROPERTIES COST 60)
