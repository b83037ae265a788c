#!/usr/bin/env bash
# Where each thread of a command spent its time: on a core, or runnable and
# waiting for one. Reads /proc/PID/task/*/schedstat (nanoseconds on the CPU,
# nanoseconds runnable on a run queue, timeslices) every 0.3 s while the
# command runs and prints the last reading, summed by thread name.
#
#   bash bench/thread-sched.sh -- node_modules/node/bin/node bin/trawl.js crawl ...
#
# A thread that is neither on a core nor runnable is blocked: in epoll
# waiting for work, or in a system call. On the bench crawl the main thread
# (MainThread) is the critical path; its "waiting" column is the time it
# had work and no core (bench/README.md, *Where the time goes*).
set -euo pipefail

if [[ "${1:-}" != "--" || $# -lt 2 ]]; then
  echo "usage: $0 -- COMMAND [ARG...]" >&2
  exit 2
fi
shift

"$@" &
pid=$!
declare -A stat name
start=$(date +%s%N)
while kill -0 "$pid" 2>/dev/null; do
  for task in /proc/"$pid"/task/*; do
    tid=${task##*/}
    s=$(cat "$task/schedstat" 2>/dev/null) || continue
    stat[$tid]=$s
    name[$tid]=$(cat "$task/comm" 2>/dev/null || echo '?')
  done
  sleep 0.3
done
rc=0
wait "$pid" || rc=$?
end=$(date +%s%N)

{
  awk -v ns="$((end - start))" -v rc="$rc" 'BEGIN { printf "wall %.1f s (exit status %d)\n", ns / 1e9, rc }'
  for tid in "${!stat[@]}"; do
    echo "${name[$tid]// /_} ${stat[$tid]}"
  done | awk '
    { run[$1] += $2; wait[$1] += $3; slices[$1] += $4; n[$1]++ }
    END {
      printf "%-16s %7s %12s %14s %10s\n", "thread", "count", "on a core s", "runnable s", "slices"
      for (k in run) printf "%-16s %7d %12.2f %14.2f %10d\n", k, n[k], run[k] / 1e9, wait[k] / 1e9, slices[k]
    }'
} >&2
exit "$rc"
