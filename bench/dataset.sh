# Sourced by the benchmark scripts. Builds the project (scripts/setup.sh), then sets
#   mpt   the mpt binary
#   data  bench/data/kv_N.json (DATA_DIR=DIR: DIR/kv_N.json): key i = keccak256(uint64
#         big-endian i), value = keccak256(key), a JSON object of 0x hex strings, generated
#         once by mpt_gen_kv and reused
# for root (the repository) and n (the number of pairs).
"$root/scripts/setup.sh" >/dev/null
mpt=$root/build/mpt
data_dir=${DATA_DIR:-$root/bench/data}
mkdir -p "$data_dir"
data=$data_dir/kv_$n.json
if [ ! -s "$data" ]; then
    echo "generating $n pairs into $data"
    # Written beside and renamed, so an interrupted run never leaves a truncated file.
    "$root/build/mpt_gen_kv" "$n" "$data.tmp"
    mv "$data.tmp" "$data"
fi
