#!/usr/bin/env bash
# Where the microseconds of a put, a batched put and a get go: each workload of
# `cask-bench profile` alone under `perf record -e cpu-clock`, its samples sorted into parts
# (system calls, AES, SHA-256, EVP set-up, Swift runtime, allocation, index, CRC, the rest),
# each part's share times the CPU microseconds per operation of the loop (perf's cpu-clock
# count, which a loaded machine does not inflate; the wall time is shown beside); then the crypto
# bound of the same operation from `openssl speed` in the same run. Docs/BENCHMARKS.md
# ("Where a microsecond goes") keeps the last table and the commit it was measured at.
#
# Needs perf (Debian's linux-perf) and a release build of the benchmarks:
#   swift build -c release --package-path Benchmarks
# Usage: scripts/profile-engine.sh [OPERATIONS]   (default 200,000 per workload)
set -euo pipefail
cd "$(dirname "$0")/.."
operations=${1:-200000}
bench=Benchmarks/.build/release/cask-bench
[ -x "$bench" ] || { echo "profile-engine: build the benchmarks first (see the header)" >&2; exit 1; }
command -v perf >/dev/null || { echo "profile-engine: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkfifo "$work/control"
for workload in put batch get; do
  # Recording starts disabled; the benchmark enables it around its timed loop only.
  perf record -q -e cpu-clock -D -1 --control "fifo:$work/control" -o "$work/$workload.data" -- \
    "$bench" profile "$workload" --ops "$operations" --perf-control "$work/control" >"$work/$workload.txt" 2>/dev/null
  perf report -i "$work/$workload.data" --no-children --sort dso,sym --stdio 2>/dev/null >"$work/$workload.report"
done
# The bound: AES-256-CBC and HMAC-SHA256 of the two messages of a record (a 1,040-byte value
# message body, an 80-byte key message body), from openssl's 1,024- and 64-byte rates, in CPU
# time as the parts are (no -elapsed).
for mode in "-evp aes-256-cbc" "-decrypt -evp aes-256-cbc" "-hmac sha256"; do
  for bytes in 64 1024; do
    # shellcheck disable=SC2086
    rate=$(openssl speed -seconds 1 -bytes "$bytes" $mode 2>/dev/null | tail -1 | awk '{print $NF}')
    echo "$mode $bytes $rate" >>"$work/speed.txt"
  done
done

python3 - "$work" "$operations" <<'PYTHON'
import re, sys
work = sys.argv[1]
operations = int(sys.argv[2])

# libcrypto ships without symbols for its assembly: a sample there is put with SHA-256 or AES
# by the nearest SHA-NI or AES-NI instruction (within 256 bytes), read from the library once.
import bisect, subprocess
library = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"
marks = []
disassembly = subprocess.run(["objdump", "-d", "--no-show-raw-insn", library], capture_output=True, text=True).stdout
for line in disassembly.splitlines():
    match = re.match(r"^\s+([0-9a-f]+):\s+(sha256\w+|aes(?:enc|dec)\w*)", line)
    if match:
        marks.append((int(match.group(1), 16), "SHA-256 (HMAC)" if match.group(2).startswith("sha") else "AES-256-CBC"))
marks.sort()
addresses = [address for address, _ in marks]

def crypto_part(address):
    at = bisect.bisect_left(addresses, address)
    near = [marks[index] for index in (at - 1, at) if 0 <= index < len(marks)]
    near = [(abs(found - address), label) for found, label in near if abs(found - address) <= 256]
    return min(near)[1] if near else "libcrypto: EVP set-up, HMAC glue"

def part(dso, symbol):
    if "kernel" in dso: return "system calls (pwrite, pread), page cache"
    if "libcrypto" in dso:
        match = re.match(r"0x([0-9a-f]+)", symbol)
        return crypto_part(int(match.group(1), 16)) if match else "libcrypto: EVP set-up, HMAC glue"
    if "libswiftCore" in dso: return "Swift runtime: retain/release, exclusivity"
    if "libc.so" in dso:
        return "malloc/free" if re.search(r"malloc|free|tcache", symbol) else "libc: memcpy and the rest"
    if re.search(r"KeyTable|KeyDirectory|KeyArena", symbol): return "index"
    if re.search(r"crc|CRC", symbol): return "CRC-32C"
    return "engine, codec and records (Swift)"

rates = {}
for line in open(f"{work}/speed.txt"):
    words = line.split()
    rates[(" ".join(words[:-2]), int(words[-2]))] = float(words[-1].rstrip("k")) * 1000
def seconds(mode, size):
    small, large = rates[(mode, 64)], rates[(mode, 1024)]
    return size / (large if size >= 1024 else small)
aes, aesd, mac = "-evp aes-256-cbc", "-decrypt -evp aes-256-cbc", "-hmac sha256"
bound = {
    "put": seconds(aes, 1040) + seconds(mac, 1074) + seconds(aes, 80) + seconds(mac, 114),
    "batch": seconds(aes, 1040) + seconds(mac, 1074) + seconds(aes, 80) + seconds(mac, 114),
    "get": seconds(aesd, 1040) + seconds(mac, 1074) + seconds(aesd, 80) + seconds(mac, 114),
}

# The parts are shares of the CPU time the loop's thread ran (cpu-clock counts only while it
# runs), so that a machine shared with other work does not inflate them; the wall time is
# printed beside it.
tables = {}
walls = {}
for workload in ("put", "batch", "get"):
    walls[workload] = float(re.search(r"([\d.]+) µs each", open(f"{work}/{workload}.txt").read()).group(1))
    report = open(f"{work}/{workload}.report").read()
    measured = int(re.search(r"Event count \(approx\.\): (\d+)", report).group(1)) / 1000 / operations
    shares = {}
    for line in report.splitlines():
        match = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.+?)\s*$", line)
        if match:
            key = part(match.group(2), match.group(3))
            shares[key] = shares.get(key, 0) + float(match.group(1))
    tables[workload] = (measured, shares)

parts = sorted({key for _, shares in tables.values() for key in shares}, key=lambda key: -tables["put"][1].get(key, 0))
print("| µs per operation | put | batched put | get |")
print("|---|---:|---:|---:|")
for key in parts:
    cells = [f"{tables[w][0] * tables[w][1].get(key, 0) / 100:.2f}" for w in ("put", "batch", "get")]
    print(f"| {key} | " + " | ".join(cells) + " |")
print("| **measured, whole operation (CPU time)** | " + " | ".join(f"**{tables[w][0]:.2f}**" for w in ("put", "batch", "get")) + " |")
print("| wall time, same loop | " + " | ".join(f"{walls[w]:.2f}" for w in ("put", "batch", "get")) + " |")
print("| crypto bound (`openssl speed`, same run) | " + " | ".join(f"{bound[w] * 1e6:.2f}" for w in ("put", "batch", "get")) + " |")
PYTHON
