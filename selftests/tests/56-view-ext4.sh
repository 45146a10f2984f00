# Hooks in a real file system's module: ext4 on a RAM disk (brd). A and B
# write and read the same number of 512-byte blocks in files of their own
# on it; hooks in A's view on ext4:ext4_file_write_iter and
# ext4_file_read_iter count exactly A's write(2)s and read(2)s, none of B's,
# and so does a tracepoint hook on ext4's own ext4:ext4_da_write_begin
# (ext4 cannot be unloaded while it is on).
# ext4 then goes (unmounted, unloaded) under the hooks: both end, listed as
# ended; loaded and mounted again, ext4_file_write_iter is hooked and
# counted again. The audit and the page-table check are clean, and no
# change of module space was followed late. Skipped where ext4 is built in
# or missing (the debug kernel has none).
. /xp/selftests/tests/lib.sh
K=/xp/kmod
[ -f $K/ext4.ko ] && [ -f $K/brd.ko ] || skip "no ext4 or brd module in this image"
[ -x /usr/sbin/mke2fs ] || skip "no mke2fs (e2fsprogs) in this image"
E=/tmp/e4
N=300

grep -q '^brd ' /proc/modules || insmod $K/brd.ko rd_nr=1 rd_size=32768 || fail "insmod brd"
for m in crc32c_generic crc16 mbcache jbd2 ext4; do
	grep -q "^$m " /proc/modules || insmod $K/$m.ko || fail "insmod $m"
done
/usr/sbin/mke2fs -q -F -t ext4 -O ^metadata_csum /dev/ram0 > /dev/null || fail "mke2fs"
mkdir -p $E
mount -t ext4 /dev/ram0 $E || fail "mount ext4"

# A: on each cue, writes then reads N blocks of its own file (dd: one
# write(2) or read(2) a block)
cued_start e4 "dd if=/dev/zero of=$E/a bs=512 count=$N 2> /dev/null &&
	dd if=$E/a of=/dev/null bs=512 count=$N 2> /dev/null"
A=$CUED_PID
# round: A writes and reads N blocks, and so does B (this shell)
round() {
	cued_go e4
	dd if=/dev/zero of=$E/b bs=512 count=$N 2> /dev/null || fail "B's writes"
	dd if=$E/b of=/dev/null bs=512 count=$N 2> /dev/null || fail "B's reads"
	cued_wait e4 "A's writes and reads"
}

xprobectl view add $A > /dev/null || fail "view add"
w=$(xprobectl hook add $A ext4:ext4_file_write_iter) || fail "hook add ext4_file_write_iter"
r=$(xprobectl hook add $A ext4_file_read_iter) || fail "hook add ext4_file_read_iter"
note "hooks: $(hook_col $w 4) $(hook_col $w 8), $(hook_col $r 4) $(hook_col $r 8)"
assert_match "the read hook is named by its module" "^ext4:ext4_file_read_iter[+]" "$(hook_col $r 4)"
round
assert_eq "writes: A's, none of B's" $N "$(hook_col $w 5)"
assert_eq "reads: A's, none of B's" $N "$(hook_col $r 5)"
addr=$(hook_col $w 3)
[ "$(xprobectl peek $A $addr 1)" != "$(xprobectl peek $$ $addr 1)" ] ||
	fail "A executes ext4's own byte at the hook"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_match "page tables" " 0 violation" "$(xprobectl audit --tables)"

# ext4's own tracepoint, on in A's view only: a delayed-allocation write of
# a block within one page begins once (ext4_da_write_begin), and ext4 is
# held while it is hooked
t=$(xprobectl hook add $A tracepoint:ext4:ext4_da_write_begin) ||
	fail "hook add tracepoint:ext4:ext4_da_write_begin: $t"
note "tracepoint hook $t: $(hook_col $t 4) at $(hook_col $t 3), kind $(hook_col $t 8)"
round
assert_eq "ext4:ext4_da_write_begin: A's writes, none of B's" $N "$(hook_col $t 5)"
refused_with "rmmod ext4 while its tracepoint is hooked" 1 \
	"in use|Resource temporarily unavailable" rmmod ext4
xprobectl hook del $t || fail "hook del of the tracepoint hook"
assert_eq "writes, two rounds" $((2 * N)) "$(hook_col $w 5)"

# ext4 goes under its hooks, comes back
ended=$(status_field module_hooks_ended)
umount $E || fail "umount"
rmmod ext4 || fail "rmmod ext4 under its hooks"
assert_eq "both hooks ended with ext4" $((ended + 2)) "$(status_field module_hooks_ended)"
[ -z "$(hook_col $w 1)$(hook_col $r 1)" ] || fail "a hook outlived ext4"
assert_eq "both listed as ended" 2 \
	"$(xprobectl hook list $A | grep -c '(ended: module ext4 was unloaded)')"
insmod $K/ext4.ko || fail "insmod ext4 again"
mount -t ext4 /dev/ram0 $E || fail "mount ext4 again"
w=$(xprobectl hook add $A ext4:ext4_file_write_iter) || fail "hook add after the reload"
round
assert_eq "writes after the reload: A's" $N "$(hook_col $w 5)"

assert_none_late
assert_match "audit at the end" "^0 private page" "$(xprobectl audit)"
assert_match "page tables at the end" " 0 violation" "$(xprobectl audit --tables)"
xprobectl view del $A || fail "view del"
kill $A 2>/dev/null
wait $A 2>/dev/null
umount $E
rmmod ext4 jbd2 mbcache crc16 crc32c_generic brd 2>/dev/null
true
