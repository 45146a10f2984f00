# make bench: every experiment, inside the VM. Results go to /mnt/share
# (build/bench on the host). BENCH_ONLY="a b" runs only those parts.
echo "== machine: $(uname -r), $(nproc) vCPUs, $(awk '/model name/ { $1 = $2 = $3 = ""; print; exit }' /proc/cpuinfo)"
for part in ${BENCH_ONLY:-untraced-syscall untraced-tp untraced-sys untraced-module untraced-memcached untraced-redis hit-cost hit-cost-tp hit-cost-sys op-cost ucall-cost redis-uprobes attribution metrics}; do
	echo "== $part"
	case $part in
	untraced-*) sh /xp/bench/untraced.sh ${part#untraced-} ;;
	hit-cost-tp) sh /xp/bench/hit-cost.sh tp ;;
	hit-cost-sys) sh /xp/bench/hit-cost.sh sys ;;
	*) sh /xp/bench/$part.sh ;;
	esac
done
