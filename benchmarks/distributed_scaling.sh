#!/usr/bin/env bash
# Thread and rank scaling of the square-root solve: the same problem with
# 1..N threads in one process and with R ranks x T threads under mpiexec
# (docs/distributed.md). Prints one Markdown row per run: wall time of the
# whole program, the solve's minimizer time, time per iteration, the final
# cost, the largest peak resident memory of any rank, and what rank 0 sent.
#
#   benchmarks/distributed_scaling.sh BUILD_DIR "RANKSxTHREADS ..." [bundle_adjuster flags]
#   e.g. benchmarks/distributed_scaling.sh build "1x1 1x2 2x1" --synthetic_num_points=100000
set -euo pipefail
build=$1
configs=$2
shift 2
program="$build/examples/bundle_adjuster"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "| ranks x threads | wall [s] | minimizer [s] | per iteration [ms] | iterations | final cost | peak memory, largest rank [MiB] | sent by rank 0 per iteration [KiB] |"
echo "|---|---|---|---|---|---|---|---|"
for config in $configs; do
  ranks=${config%x*}
  threads=${config#*x}
  rm -f "$work"/time.*
  start=$(date +%s.%N)
  mpiexec -np "$ranks" --oversubscribe --bind-to none --mca btl self,vader \
    bash -c "exec /usr/bin/time -f '%M' -o $work/time.\$OMPI_COMM_WORLD_RANK \"\$0\" \"\$@\"" \
    "$program" --num_threads="$threads" --summary_csv="$work/summary.csv" "$@" > "$work/out.log" 2>&1
  end=$(date +%s.%N)
  peak_kib=$(cat "$work"/time.* | sort -n | tail -1)
  row=$(tail -1 "$work/summary.csv")
  iterations=$(echo "$row" | cut -d, -f9)
  final=$(echo "$row" | cut -d, -f8)
  minimizer=$(echo "$row" | cut -d, -f18)
  sent=$(grep -o 'sent [0-9]* bytes' "$work/out.log" | grep -o '[0-9]*' || echo 0)
  awk -v c="$config" -v s="$start" -v e="$end" -v m="$minimizer" -v i="$iterations" -v f="$final" \
      -v p="$peak_kib" -v b="$sent" 'BEGIN {
    printf "| %s | %.2f | %.2f | %.1f | %d | %.9e | %.0f | %.0f |\n", c, e - s, m, 1000 * m / (i + 1), i, f, p / 1024,
           b / 1024 / (i + 1) }'
done
