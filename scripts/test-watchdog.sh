#!/usr/bin/env bash
# Runs a test command (CI: `swift test`) and watches its output. When it prints nothing for
# STALL seconds (600 by default), the run has stopped making progress: every thread of each
# test process is printed (gdb), the run is stopped, and the script fails with status 124.
# Any other failure ends with the command's own non-zero status. A stall is a failure, never
# retried: it is a deadlock or a lost thread to be fixed, and a rerun would hide it.
#
# Why: without a watchdog, a run that stopped would make CI wait out its time limit and say
# nothing about where the run stood; the stacks show which threads wait for what.
#
# Usage: scripts/test-watchdog.sh COMMAND [ARGUMENT...]
set -uo pipefail

stall=${STALL:-600}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Prints each thread's stack of every process in the run's session but the command itself
# (the test processes, where the tests run). By session, not process group: `swift test`
# starts each test process in a process group of its own.
dump_stacks() {
  local session=$1 pid
  for pid in $(pgrep -s "$session"); do
    [ "$pid" = "$session" ] && continue
    echo "== test-watchdog: threads of $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)" >&2
    if command -v gdb >/dev/null; then
      timeout 120 gdb -p "$pid" -batch -ex "thread apply all bt 30" 2>/dev/null | grep -E '^(Thread|#)' >&2
    fi
  done
}

# Prints the tests that started and never ended (swift-testing's "◇ Test NAME started." without
# a later result for NAME; XCTest's "Test Case 'NAME' started" without "Test Case 'NAME'
# passed/failed"): when every thread is idle, the stacks cannot say which test waits.
unfinished_tests() {
  echo "== test-watchdog: tests started and not ended:" >&2
  python3 - "$log" >&2 <<'PY'
import re, sys
started, ended = [], set()
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if m := re.search(r'◇ Test "(.*)" started\.', line):
        started.append(m.group(1))
    elif m := re.search(r'[✔✘] Test "(.*?)" (passed|failed|with )', line):
        ended.add(m.group(1))
    elif m := re.search(r"Test Case '(.*)' started", line):
        started.append(m.group(1))
    elif m := re.search(r"Test Case '(.*)' (passed|failed|skipped)", line):
        ended.add(m.group(1))
for name in started:
    if name not in ended:
        print("   ", name)
PY
}

# Runs the command once; returns its status, or 124 when it stalled.
run_once() {
  : >"$log"
  setsid "$@" > >(tee -a "$log") 2>&1 &
  local pid=$! size=-1 quiet=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 10
    local now
    now=$(stat -c %s "$log")
    if [ "$now" = "$size" ]; then
      quiet=$((quiet + 10))
    else
      size=$now quiet=0
    fi
    if [ "$quiet" -ge "$stall" ]; then
      echo "== test-watchdog: no output for ${stall} s; the run has stopped making progress" >&2
      unfinished_tests
      dump_stacks "$pid"
      # Every process of the session: a test process left behind would hold its files and
      # memory while the command runs again.
      pkill -TERM -s "$pid" 2>/dev/null
      sleep 5
      pkill -KILL -s "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      return 124
    fi
  done
  wait "$pid"
}

run_once "$@"
status=$?
if [ "$status" = 124 ]; then
  echo "== test-watchdog: the run stalled (stacks above); this is a failure" >&2
fi
exit "$status"
