#!/bin/sh
# Guest: the last step of a debug-kernel boot. Unload the module (what it
# leaked is unreferenced only then), let kmemleak scan twice (an object must
# be older than 5 s to be reported) and print every report; any report fails.
K=/sys/kernel/debug/kmemleak
[ -w $K ] || { echo "not ok 0 kmemleak # $K is missing"; exit 0; }
lsmod | grep -q '^xprobes ' && rmmod xprobes
sleep 6
echo scan > $K
sleep 1
echo scan > $K
n=$(grep -c '^unreferenced object' $K)
if [ "$n" = 0 ]; then
	echo "ok 0 kmemleak # no leak reported"
else
	sed 's/^/# /' $K | head -n 200
	echo "not ok 0 kmemleak # $n suspected leaks"
fi
