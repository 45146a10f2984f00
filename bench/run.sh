# make bench: every experiment, inside the VM. Results go to /mnt/share
# (build/bench on the host).
echo "== machine: $(uname -r), $(nproc) vCPUs, $(awk '/model name/ { $1 = $2 = $3 = ""; print; exit }' /proc/cpuinfo)"
sh /xp/bench/untraced-syscall.sh
