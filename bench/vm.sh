#!/bin/bash
# make bench, host side: every part of bench/run.sh in a VM of its own, on
# instruction-count time (XP_ICOUNT, default 0; empty for wall-clock time).
# A guest that dies costs its part, not the run (docs/experiments.md,
# crash section): the other parts still run and are plotted, and the exit status
# says that one failed.
#   usage: bench/vm.sh OUTDIR     (BENCH_ONLY, METRICS_PARTS, METRICS_SERVERS, ROUNDS,
#   CONFIGS, RB_ALL from the environment; CONFIGS narrows a part to those configurations,
#   RB_ALL sets the requests of redis-uprobes' traceall rows)
set -u
HERE=$(dirname "$(readlink -f "$0")")
OUT=$1
RUNVM=$HERE/../selftests/vm/run-vm.sh
mkdir -p "$OUT"
parts=${BENCH_ONLY:-$(sed -n 's/.*BENCH_ONLY:-\([^}]*\)}.*/\1/p' "$HERE/run.sh")}
failed=
for part in $parts; do
	{
		echo "BENCH_ONLY='$part'"
		echo "export METRICS_PARTS='${METRICS_PARTS:-}'"
		echo "export METRICS_SERVERS='${METRICS_SERVERS:-}' ROUNDS='${ROUNDS:-}' CONFIGS='${CONFIGS:-}' RB_ALL='${RB_ALL:-}'"
		cat "$HERE/run.sh"
	} > "$OUT/job.sh"
	XP_ICOUNT=${XP_ICOUNT-0} bash "$RUNVM" --timeout ${BENCH_PART_TIMEOUT:-3600} --share "$OUT" \
		--log "$OUT/console-$part.log" --script "$OUT/job.sh"
	st=$?
	[ $st = 0 ] || { failed="$failed $part"; echo "bench: part $part failed (status $st); console: $OUT/console-$part.log" >&2; }
done
bash "$HERE/plot.sh" "$OUT"
[ -z "$failed" ] || { echo "bench: failed parts:$failed" >&2; exit 1; }
