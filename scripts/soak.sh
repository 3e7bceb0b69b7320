#!/usr/bin/env bash
# Runs the engine's crash, power-loss and concurrency tests over and over with fresh seeds
# for SECONDS, and stops at the first failure with the command that replays it.
#
#   scripts/soak.sh SECONDS [SEED]
#
# Each round runs, with CASK_TEST_SEED set to the round's seed:
#   1. crash:       CrashRecoveryTests: a real writer (cask-crash-writer, durability .always)
#                   SIGKILLed at random moments, the store reopened and checked against
#                   every acknowledged write, verify() and the batch rule after each kill;
#                   IndexKillRecoveryTests: the same through a collection with indexes,
#                   checked with verifyIndexes() and the index queries;
#   2. power loss:  PowerLossTests and MaintenanceCrashTests on the fault-injecting file
#                   system (unsynced writes dropped or torn at random points, also inside
#                   compaction and password changes);
#   3. concurrency: ConcurrencyTests/mixedWorkload: four writers, a reader, compaction and
#                   password changes at once, each writer checked against its model;
#   4. crash states (a soak of 600 s or more, first round only: the enumeration is exhaustive within its bounds and
#                   has no seed, so a second round would repeat it): the crash-state
#                   enumerator's workloads with CASK_CRASH_STATES_LONG=1 (wider bounds, and
#                   scripts/read-store.py reading every state; the sync workload with a real
#                   Kinto too, as KintoCrashStateTests matches the filter).
# Round r uses seed SEED + r (SEED is random unless given), so a whole soak replays from its
# first seed and a failing round from its own. CASK_SOAK_ITERATIONS (default 1) is passed on
# as CASK_TEST_ITERATIONS to make each round longer.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
  echo "usage: scripts/soak.sh SECONDS [SEED]" >&2
  exit 64
fi
seconds=$1
base=${2:-$(( (RANDOM << 30 | RANDOM << 15 | RANDOM) + 1 ))}
iterations=${CASK_SOAK_ITERATIONS:-1}
log_dir=.build/soak
mkdir -p "$log_dir"

swift build --build-tests >&2
echo "soak: ${seconds}s from seed $base (replay all with: scripts/soak.sh $seconds $base), iterations x$iterations"

phases=(crash power-loss concurrency crash-states)
declare -A filters=(
  [crash]='CrashRecoveryTests|IndexKillRecoveryTests'
  [power-loss]='PowerLossTests|MaintenanceCrashTests'
  [concurrency]='ConcurrencyTests/mixedWorkload'
  [crash-states]='CrashStateTests|CrashStateRegressionTests|CollectionCrashStateTests'
)
crash_states=0 crash_images=0
rounds=0 kills=0 acknowledged=0 power_scenarios=0 concurrent_operations=0 compactions=0 password_changes=0
start=$SECONDS
round=0
while [ $((SECONDS - start)) -lt "$seconds" ]; do
  seed=$((base + round))
  for phase in "${phases[@]}"; do
    # Five minutes or more: only in a soak of ten minutes or longer, not CI's short one (whose
    # `swift test` runs the crash-state workloads at their standard bounds).
    if [ "$phase" = crash-states ] && { [ "$round" -gt 0 ] || [ "$seconds" -lt 600 ]; }; then continue; fi
    log="$log_dir/round-$round-$phase.log"
    if ! CASK_TEST_SEED=$seed CASK_TEST_ITERATIONS=$iterations CASK_CRASH_STATES_LONG=$([ "$phase" = crash-states ] && echo 1 || echo 0) \
      swift test --skip-build --filter "${filters[$phase]}" >"$log" 2>&1; then
      grep -E "seed|failed|Issue|error" "$log" | head -40 >&2 || true
      echo "soak: FAILED in round $round ($phase), seed $seed; log $log" >&2
      echo "soak: replay with: CASK_TEST_SEED=$seed CASK_TEST_ITERATIONS=$iterations swift test --filter '${filters[$phase]}'" >&2
      echo "soak: $rounds rounds passed before it; 1 failure"
      exit 1
    fi
    case $phase in
      crash)
        line=$(grep -Eo '\[crash-kill\] [0-9]+ kills, [0-9]+ acknowledged' "$log" | tail -1)
        kills=$((kills + $(echo "$line" | awk '{print $2}')))
        acknowledged=$((acknowledged + $(echo "$line" | awk '{print $4}')))
        ;;
      power-loss)
        # PowerLossTests: 6 iterations of 5 crashes with .always, the same with .never, and 6
        # crashes under concurrent writers; MaintenanceCrashTests adds its own crash points.
        power_scenarios=$((power_scenarios + (6 * 5 + 6 * 5 + 6) * iterations))
        ;;
      concurrency)
        line=$(grep -Eo '\[concurrency-mixed\] [0-9]+ compactions and [0-9]+ password changes' "$log" | tail -1)
        compactions=$((compactions + $(echo "$line" | awk '{print $2}')))
        password_changes=$((password_changes + $(echo "$line" | awk '{print $5}')))
        concurrent_operations=$((concurrent_operations + 4 * 300 * iterations))
        ;;
      crash-states)
        crash_states=$(grep -Eo '[0-9]+ crash states, [0-9]+ distinct' "$log" | awk '{s += $1} END {print s + 0}')
        crash_images=$(grep -Eo '[0-9]+ distinct images' "$log" | awk '{s += $1} END {print s + 0}')
        ;;
    esac
  done
  rounds=$((round + 1))
  echo "soak: round $round (seed $seed) passed after $((SECONDS - start))s"
  round=$((round + 1))
done
echo "soak: $rounds rounds in $((SECONDS - start))s from seed $base: $kills SIGKILLs survived," \
  "$acknowledged acknowledged writes checked, $power_scenarios power-loss scenarios," \
  "$concurrent_operations concurrent operations checked beside $compactions compactions and" \
  "$password_changes password changes, $crash_states crash states ($crash_images distinct images) checked; 0 failures"
