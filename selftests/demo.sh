# make demo: runs inside the VM (as root, module loaded at boot).
F=__x64_sys_getppid
echo "== kernel $(uname -r), xprobes loaded:"
lsmod | grep '^xprobes '
xprobectl status
echo
echo "== process A (traced) and B (untraced) will both call getppid() 1000 times"
sysloop -g -e -n 1000 getppid > /tmp/a.out &
A=$!
while ! grep -q ready /tmp/a.out; do sleep 0.1; done
echo "\$ xprobectl view add $A"
xprobectl view add $A
echo "\$ xprobectl hook add $A $F"
xprobectl hook add $A $F
echo
echo "== the same kernel address, as A and as B see it:"
echo "\$ xprobectl peek $A $F 16     # A: int3 (cc) after ENDBR + fentry"
xprobectl peek $A $F 16
echo "\$ xprobectl peek $$ $F 16     # B: the original code"
xprobectl peek $$ $F 16
echo
kill -USR1 $A
while ! grep -q done /tmp/a.out; do sleep 0.1; done
sysloop -n 1000 getppid
echo "== after A's 1000 calls and B's 1000 calls:"
echo "\$ xprobectl hook list"
xprobectl hook list
echo "\$ xprobectl view list"
xprobectl view list
xprobectl view del $A
kill -USR1 $A
wait $A
echo
echo "== done: the hook counted A only; B ran the shared, unmodified text."
