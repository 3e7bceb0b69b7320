#!/usr/bin/env python3
"""What appending to a growing file costs on this machine, without CipherCask.

Writes what the engine writes under `.never` for 1 KiB puts: 256 KiB of zeros ahead of the
writer (the reserved space), then 1,200-byte records over them, one `pwrite` each, and prints
the time of each part per round of about 220 MiB. A file many times larger than the caches
shows whether fresh page-cache pages get dearer as the file grows: on the machine
Docs/BENCHMARKS.md was measured on they did, which is most of what separates a put at
1,000,000 keys from one at 10,000 ("Where a microsecond goes").

Usage: scripts/page-cache-growth.py [DIRECTORY] [ROUNDS]   (default: /tmp, 5 rounds)
"""

import os
import sys
import tempfile
import time

CHUNK = 256 * 1024
RECORD = 1200
RECORDS_PER_CHUNK = CHUNK // RECORD
CHUNKS_PER_ROUND = 900


def main() -> int:
    directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    zeros = bytes(CHUNK)
    record = os.urandom(RECORD)
    with tempfile.NamedTemporaryFile(dir=directory) as file:
        fd = file.fileno()
        offset = 0
        for _ in range(rounds):
            zero_time = record_time = 0.0
            for _ in range(CHUNKS_PER_ROUND):
                start = time.perf_counter()
                os.pwrite(fd, zeros, offset)
                zero_time += time.perf_counter() - start
                start = time.perf_counter()
                for _ in range(RECORDS_PER_CHUNK):
                    os.pwrite(fd, record, offset)
                    offset += RECORD
                record_time += time.perf_counter() - start
            records = CHUNKS_PER_ROUND * RECORDS_PER_CHUNK
            print(
                f"{offset >> 20:6d} MiB written: zeros {zero_time / CHUNKS_PER_ROUND * 1e6:6.0f} µs a chunk "
                f"({zero_time / records * 1e6:.2f} µs a record), records {record_time / records * 1e6:.2f} µs each"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
