# Hooks in 9p's read path: the VM's shared directory (VM_SHARE, mounted at
# /mnt/share over virtio-9p), whose file system is the 9p module. A and B
# each read N blocks of a file of their own there (dd: one read(2) a
# block, each one a v9fs_file_read_iter() call: the mount has no cache);
# a hook in A's view on v9fs_file_read_iter counts exactly A's reads, none
# of B's, and A executes its private copy of the module's page (the first
# byte differs from B's). Then 9p:v9fs_file_read_iter by its module's name
# is the same hook's place; the audit and the page-table check are clean,
# and no change of module space was followed late. Skipped where no share
# is mounted (the debug and flavour boots) or where 9p is built in.
. /xp/selftests/tests/lib.sh
S=/mnt/share
grep -q " $S 9p " /proc/mounts || skip "no 9p share mounted at $S (VM_SHARE)"
grep -q '^9p ' /proc/modules || skip "9p is built into this kernel: its text is the image's"
N=200
D=$S/xp57.$$
mkdir -p $D || fail "mkdir on the share"
trap 'rm -rf $D' EXIT
dd if=/dev/zero of=$D/a bs=512 count=$N 2> /dev/null || fail "A's file"
dd if=/dev/zero of=$D/b bs=512 count=$N 2> /dev/null || fail "B's file"

# A: on each cue, reads its file, N blocks of 512 bytes
cued_start p9 "dd if=$D/a of=/dev/null bs=512 count=$N 2> /dev/null"
A=$CUED_PID
# round: A and B (this shell) read their files at the same time
round() {
	cued_go p9
	dd if=$D/b of=/dev/null bs=512 count=$N 2> /dev/null || fail "B's reads"
	cued_wait p9 "A's reads"
}

xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A v9fs_file_read_iter) || fail "hook add v9fs_file_read_iter: $id"
note "hook $id: $(hook_col $id 4), $(hook_col $id 8)"
assert_match "the hook is named by its module" "^9p:v9fs_file_read_iter[+]0x" "$(hook_col $id 4)"
round
assert_eq "reads over 9p: A's, none of B's" $N "$(hook_col $id 5)"
addr=$(hook_col $id 3)
[ "$(xprobectl peek $A $addr 1)" != "$(xprobectl peek $$ $addr 1)" ] ||
	fail "A executes 9p's own byte at the hook"
refused_with "the same place again, by its module's name" 1 "already has hook $id" \
	xprobectl hook add $A 9p:v9fs_file_read_iter
round
assert_eq "a second round: A's reads" $((2 * N)) "$(hook_col $id 5)"

assert_none_late
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_match "page tables" " 0 violation" "$(xprobectl audit --tables)"
xprobectl view del $A || fail "view del"
kill $A 2>/dev/null
wait $A 2>/dev/null
true
