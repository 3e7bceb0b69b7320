#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets into Fuzz/Corpus/TARGET, deterministically: each
# target's plain build (`swift build`, no libFuzzer) makes its seeds with the real encoders and
# fixed keys and IVs, so running this again gives the same bytes. Then replays every seed once.
#
#   scripts/make-fuzz-corpus.sh            # every target but store; store's seeds replayed only
#   scripts/make-fuzz-corpus.sh --store    # also writes new seeds for fuzz-store
#
# fuzz-store's seeds are whole stores written by the engine itself, which draws the data key,
# the store's identity and every IV at random and offers no way to fix them: each run would
# write other bytes. They are made once and committed; this script keeps them unless asked
# (after a change to the format, so that the seeds are stores the engine writes now).
set -euo pipefail
cd "$(dirname "$0")/.."

remake_store=false
case "${1:-}" in
  "") ;;
  --store) remake_store=true ;;
  *) echo "usage: scripts/make-fuzz-corpus.sh [--store]" >&2; exit 64 ;;
esac

targets=(rncryptor segment hint header checkpoint store import binary-decoder cli-args)
for target in "${targets[@]}"; do
  swift build --product "fuzz-$target" >&2
done
bin=$(swift build --show-bin-path)
for target in "${targets[@]}"; do
  if [ "$target" = store ] && [ "$remake_store" = false ]; then
    echo "fuzz-store: seeds kept as committed (random data key, identity and IVs; --store writes new ones)"
  else
    rm -rf "Fuzz/Corpus/$target"
    "$bin/fuzz-$target" --make-corpus "Fuzz/Corpus/$target"
  fi
  "$bin/fuzz-$target" "Fuzz/Corpus/$target"
done
