# make demo: runs inside the VM (as root, module loaded at boot).
echo "== kernel: $(uname -r)"
echo "== lsmod | grep xprobes"
lsmod | grep '^xprobes '
echo "== xprobectl status"
xprobectl status
