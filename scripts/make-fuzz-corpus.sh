#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets into Fuzz/Corpus/TARGET, deterministically: each
# target's plain build (`swift build`, no libFuzzer) makes its seeds with the real encoders and
# fixed keys and IVs, so running this again gives the same bytes. Then replays every seed once.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(rncryptor segment hint header checkpoint import binary-decoder cli-args)
for target in "${targets[@]}"; do
  swift build --product "fuzz-$target" >&2
done
bin=$(swift build --show-bin-path)
for target in "${targets[@]}"; do
  rm -rf "Fuzz/Corpus/$target"
  "$bin/fuzz-$target" --make-corpus "Fuzz/Corpus/$target"
  "$bin/fuzz-$target" "Fuzz/Corpus/$target"
done
