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
N=$(scaled 50 5)
while [ $i -lt $N ]; do
	i=$((i + 1))
	cycle $i
	if [ $((i % 10)) = 0 ]; then
		xprobectl status > /dev/null || fail "no status after cycle $i"
	fi
done
after=$(kmem_kb)
growth=$((after - before))
note "kernel memory before ${before} kB, after ${after} kB, growth ${growth} kB over $N cycles"
# A leak of one page per cycle would show as 200 kB.
assert_no_growth "$N insmod/rmmod cycles" $growth 128
