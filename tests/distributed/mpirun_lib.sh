# Shared by the mpirun_*_test.sh scripts (sourced).

# mpirun_spread MPIEXEC RANKS LOG PROGRAM [ARGS...]: PROGRAM on RANKS ranks of
# this machine (shared memory), its output in LOG; exits the script with LOG
# shown unless every rank succeeded and rank 0 printed "Ranks: RANKS;".
mpirun_spread() {
  local mpiexec=$1 ranks=$2 log=$3
  shift 3
  "$mpiexec" -np "$ranks" --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    "$@" > "$log" 2>&1 || {
    cat "$log" >&2
    exit 1
  }
  grep -q "^Ranks: $ranks;" "$log" || { echo "no 'Ranks: $ranks' line" >&2; cat "$log" >&2; exit 1; }
}

# is_single ARGS...: prints 1 when --precision=single is among ARGS, else 0.
is_single() {
  case " $* " in *" --precision=single "*) echo 1 ;; *) echo 0 ;; esac
}
