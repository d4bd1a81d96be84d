# Sourced by the bench/run_*_gpu.sh scripts after they set $logs and $summary:
#   step NAME LOG SECONDS COMMAND...
# runs COMMAND under a time limit (so a slow step cannot starve the next), appends its output
# to $logs/LOG and a one-line status to $summary; returns the command's status.
step() {
  local name=$1 log=$2 limit=$3 start=$SECONDS
  shift 3
  timeout "$limit" "$@" >>"$logs/$log" 2>&1
  local status=$?
  printf '%-24s %-7s %4ds  (%s)\n' "$name" \
    "$([[ $status == 0 ]] && echo ok || echo "rc=$status")" $((SECONDS - start)) "$log" \
    | tee -a "$summary"
  return $status
}
