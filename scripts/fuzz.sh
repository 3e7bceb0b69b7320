#!/usr/bin/env bash
# Builds one libFuzzer target and fuzzes it for SECONDS, starting from its committed seeds.
#
#   scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
#
# TARGET is rncryptor, segment, hint, header, checkpoint, store, import, binary-decoder or cli-args (with or without the fuzz- prefix).
# The build goes to .build/fuzz (release, libFuzzer + AddressSanitizer), kept apart from the
# plain .build so neither rebuilds the other. New interesting inputs collect in
# .build/fuzz-work/corpus/TARGET (outside the build directory, which SwiftPM may clear); a
# crash is written to .build/fuzz-work/artifacts/TARGET/ and fails the script, and so does a
# binary without coverage instrumentation (one that would "fuzz" without learning anything). Copy such a file into Tests/<Module>Tests/Regressions/fuzz-TARGET/ and
# `swift test --filter FuzzRegression` replays it forever after. See Docs/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]" >&2
  echo "targets: $(ls Fuzz/Corpus | tr '\n' ' ')" >&2
  exit 64
fi
target=${1#fuzz-}
seconds=$2
shift 2
if [ ! -d "Fuzz/Corpus/$target" ]; then
  echo "fuzz.sh: no target '$target'; targets: $(ls Fuzz/Corpus | tr '\n' ' ')" >&2
  exit 64
fi

# FUZZ_CONFIG=debug: an unoptimised build in .build/fuzz-debug. It instruments the same code
# with the same checks and skips the optimiser, the bulk of a release build's CPU, so CI's short
# runs use it; long runs, where executions a second matter, keep the default release build.
config=${FUZZ_CONFIG:-release}
case "$config" in
  release) scratch=.build/fuzz ;;
  debug) scratch=.build/fuzz-debug ;;
  *) echo "fuzz.sh: FUZZ_CONFIG must be release or debug, not '$config'" >&2; exit 64 ;;
esac
# SwiftPM keeps its sanitizers in an unordered set and passes each as its own `-sanitize=`
# flag; the Swift driver honours only the last one, so half of all builds compiled with ASan
# but without coverage counters. The explicit flag comes last and names both.
# FUZZ_SKIP_BUILD=1: the binary is built already (CI builds every target first, then fuzzes two
# at a time, and two builds must not share the scratch directory at once).
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  swift build -c "$config" --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
    --scratch-path "$scratch" --product "fuzz-$target" >&2
fi
binary="$scratch/$config/fuzz-$target"

work=".build/fuzz-work/corpus/$target"
artifacts=".build/fuzz-work/artifacts/$target"
mkdir -p "$work" "$artifacts"
dictionary=()
if [ -f "Fuzz/Dictionaries/$target.dict" ]; then dictionary=("-dict=Fuzz/Dictionaries/$target.dict"); fi
log=".build/fuzz-work/fuzz-$target.log"

# Swift's runtime keeps metadata caches that LeakSanitizer reports at exit; leaks are not
# what these targets hunt. Everything else AddressSanitizer finds is fatal.
# malloc_context_size=0: ASan otherwise unwinds and stores the stack of every allocation and
# free (a quarter to a third of the CPU time of the store targets, see Docs/RELIABILITY.md);
# detection is the same, only a report lacks the allocation and free stacks. To see them,
# replay the artifact with ASAN_OPTIONS=malloc_context_size=30 (the caller's options win).
status=0
ASAN_OPTIONS="detect_leaks=0:malloc_context_size=0:${ASAN_OPTIONS:-}" "$binary" \
  -max_total_time="$seconds" -print_final_stats=1 -timeout=20 -rss_limit_mb=3072 \
  -artifact_prefix="$artifacts/" "${dictionary[@]}" "$@" "$work" "Fuzz/Corpus/$target" >"$log" 2>&1 || status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
coverage=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 || true)
if ! grep -Eq '^#[0-9]+[[:space:]]+INITED[[:space:]]+cov: [0-9]+' "$log"; then
  head -20 "$log" >&2
  echo "fuzz-$target: FAILED: the binary has no coverage instrumentation (libFuzzer learns nothing)" >&2
  exit 1
fi
if [ "$status" -ne 0 ] || [ -z "$runs" ]; then
  tail -60 "$log" >&2
  echo "fuzz-$target: FAILED (status $status) after ${runs:-?} executions; log $log; artifacts in $artifacts" >&2
  exit 1
fi
echo "fuzz-$target: $runs executions in ${seconds}s, $speed execs/s, ${coverage:-cov: ?}, corpus $(ls "$work" | wc -l) new inputs, no crash"
