# trace --json: the document parses (strict parser) and has every field of
# the schema in docs/trace.md with its type; per-thread rows with -T,
# wakers with -W.
. /xp/selftests/tests/lib.sh
nullblk_setup 2
XW_N=4 trace_scenario /tmp/j lock -T -H -W
J=/tmp/j.json
type_is() { assert_eq "type of $1" "$2" "$(jsonq -t $J "$1")"; }
assert_eq "schema" "xprobes-trace/1" "$(jsonq $J schema)"
for k in pid elapsed_ns functions_traced functions_failed; do type_is $k number; done
for k in comm mode mode_note schema; do type_is $k string; done
type_is final bool
type_is causes array
assert_eq "causes" "runq wakeup throttled lock mem io net sleep other" \
	"$(for i in 0 1 2 3 4 5 6 7 8; do jsonq $J "causes.[$i]"; done | tr '\n' ' ' | sed 's/ $//')"
assert_eq "nine causes" 9 "$(jsonq $J 'causes.#')"
for k in entries returns unmatched early abandoned depth_overflow switch_out switch_in no_thread \
	 wakers_lost fixups exits; do
	type_is counters.$k number
done
type_is functions array
F='functions.[name=xw_delay]'
for k in name module offset; do type_is $F.$k string; done
for k in calls wall_ns on_cpu_ns off_cpu_ns self.wall_ns self.on_cpu_ns self.off_cpu_ns; do
	type_is $F.$k number
done
for c in runq wakeup throttled lock mem io net sleep other; do
	type_is $F.off_cpu_ns_by_cause.$c number
	type_is $F.self.off_cpu_ns_by_cause.$c number
	type_is $F.histograms.off_cpu.$c array
done
type_is $F.histograms.wall array
type_is $F.histograms.on_cpu array
type_is "$F.histograms.wall.[0].lo_ns" number
type_is "$F.histograms.wall.[0].count" number
type_is $F.threads array
for k in tid calls wall_ns on_cpu_ns off_cpu_ns; do type_is "$F.threads.[0].$k" number; done
type_is "$F.threads.[0].comm" string
assert_eq "the traced thread is the main thread" "$(jsonq $J pid)" "$(jsonq $J "$F.threads.[0].tid")"
assert_eq "sum of causes = off_cpu_ns" "$(jsonq $J $F.off_cpu_ns)" \
	"$(( $(for c in runq wakeup throttled lock mem io net sleep other; do printf '%s + ' $(jsonq $J $F.off_cpu_ns_by_cause.$c); done) 0 ))"
# -W: xw_delay's waits end by xw_hold's unlock (a thread of ours)
type_is $F.wakers array
W="$F.wakers.[kind=thread]"
type_is $W.function string
for k in tid waits off_cpu_ns; do type_is $W.$k number; done
assert_eq "waker function" xw_hold "$(jsonq $J $W.function)"
assert_match "offset is hex" '^0x[0-9a-f]+$' "$(jsonq $J $F.offset)"
for k in forks forks_lost; do type_is counters.$k number; done
# --children: processes, the target first
XW_N=2 XW_GO=2 trace_scenario /tmp/jc fork --children -v
J=/tmp/jc.json P='processes.[0]'
type_is processes array
type_is "processes.[1].probes_after_ms" number
for k in pid parent processes; do type_is $P.$k number; done
type_is $P.comm string
type_is $P.functions array
type_is "$P.functions.[0].name" string
for k in calls wall_ns on_cpu_ns off_cpu_ns; do type_is "$P.functions.[0].$k" number; done
for c in runq wakeup throttled lock mem io net sleep other; do
	type_is "$P.functions.[0].off_cpu_ns_by_cause.$c" number
done
assert_eq "the target is the first process" "$(jsonq $J pid)" "$(jsonq $J $P.pid)"
assert_eq "three processes" 3 "$(jsonq $J 'processes.#')"
type_is processes_followed number
type_is processes_unprobed number
assert_eq "processes followed: the two workers" 2 "$(jsonq $J processes_followed)"
