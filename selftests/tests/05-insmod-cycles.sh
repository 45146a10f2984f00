# 50 insmod/rmmod cycles: each load registers the family and answers; kernel
# memory (slab + vmalloc + percpu) does not grow.
. /xp/selftests/tests/lib.sh

cycle() {
	rmmod xprobes || fail "rmmod failed in cycle $1"
	insmod $KO || fail "insmod failed in cycle $1"
}
for i in 1 2 3 4 5; do cycle warm$i; done
before=$(kmem_kb)
i=0
while [ $i -lt 50 ]; do
	i=$((i + 1))
	cycle $i
	if [ $((i % 10)) = 0 ]; then
		xprobectl status > /dev/null || fail "no status after cycle $i"
	fi
done
after=$(kmem_kb)
growth=$((after - before))
note "kernel memory before ${before} kB, after ${after} kB, growth ${growth} kB over 50 cycles"
# A leak of one page per cycle would show as 200 kB.
[ $growth -lt 128 ] || fail "kernel memory grew by ${growth} kB"
