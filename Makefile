# SPDX-License-Identifier: GPL-2.0
# xprobes: one entry point. See README.md.
#
#   make deps     install Debian packages, fetch the target kernels (image + headers)
#   make          module (against KDIR), xprobectl, BPF objects, selftest programs
#   make check    everything: build, boot the VM on each of KERNELS ("6.12 6.1"),
#                 run all selftests, summary line
#   make demo     boot the VM, load the module, show what xprobes does
#   make kunit    build the debug kernel (cached), run the module's KUnit suites in it
#   make check-debug   KUnit, selftests, stress and fuzz tests on the debug
#                 kernel (KASAN, lockdep, kmemleak), then a kmemleak scan
#   make vm CMD='...' [VM_SHARE=dir] [KSERIES=6.1]   run CMD as root in the test VM
#   make clean

BUILD    ?= $(CURDIR)/build
# Kernels are named SERIES[-FLAVOUR] (6.12, 6.1, 6.1-rt, 6.12-cloud) and
# fetched from Debian's archive into $(BUILD)/kernel/<name> (fetch-kernel.sh).
# KSERIES is the one 'make module' and 'make vm' use; make check runs the guest
# suite on each of KERNELS.
KSERIES  ?= 6.12
KERNELS  ?= 6.12 6.1
KTREE    := $(BUILD)/kernel/$(KSERIES)
KDIR     ?= $(KTREE)/headers
KIMAGE   ?= $(KTREE)/vmlinuz
# A KDIR given by the user is used as it is: nothing is fetched for it.
KDIR_DEP := $(if $(filter $(KTREE)/headers,$(KDIR)),$(KTREE)/.complete)
kseries  = $(firstword $(subst -, ,$(1)))
kflavour = $(if $(word 2,$(subst -, ,$(1))),$(word 2,$(subst -, ,$(1)))-amd64,amd64)
VMLINUX_BTF ?= $(BUILD)/kernel/6.12/headers/vmlinux
BTF_DEP  := $(if $(filter $(BUILD)/kernel/6.12/headers/vmlinux,$(VMLINUX_BTF)),$(BUILD)/kernel/6.12/.complete)
VERSION  := $(shell sed -n 's/^\#define XPROBES_VERSION "\(.*\)"/\1/p' module/xprobes.h)
PREFIX   ?= /usr/local
# make install: the module for the running kernel (or KREL), from its headers.
KREL     ?= $(shell uname -r)

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
CFLAGS   ?= -O2 -g
XCFLAGS  := -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
	    $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
LDLIBS_CTL := -lnl-genl-3 -lnl-3 -lbpf -lelf -lz -lm -lprotobuf-c

# Kbuild on every core, unless this make already runs jobs (its jobserver then
# spreads them): a module builds in half the time on two cores.
KBUILD_J := $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc))
# Module builds through ccache where it is installed (make deps installs it):
# the cache lives outside the clone, so a fresh clone of the same machine
# (CI's) compiles again only the files whose preprocessed text changed.
# Paths under the clone are hashed relative to it and the build's working
# directory (the kernel's headers, also in the clone) is left out, so two
# clones at different paths share objects; the debug info of a hit names
# the clone that compiled it first.
KBUILD_CC := $(if $(shell command -v ccache),CC="ccache gcc")
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

VM       := selftests/vm
RUNVM    := $(VM)/run-vm.sh
# The default kernel's image uses the module built in place (make module); any
# other kernel's is built from a copy of the sources under $(BUILD)/k/<name>
# (Kbuild builds external modules in their source tree).
initrd_of = $(if $(filter 6.12,$(1)),$(BUILD)/vm/base.cpio.gz,$(BUILD)/k/$(1)/base.cpio.gz)
INITRD   := $(call initrd_of,$(KSERIES))
VM_TIMEOUT ?= 600

CTL_SRCS  := $(wildcard ctl/*.c)
# profile.proto (trace --pprof) compiled by protoc-c into the build tree
CTL_OBJS  := $(CTL_SRCS:ctl/%.c=$(BUILD)/ctl/%.o) $(BUILD)/ctl/profile.pb-c.o
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)
# BPF objects the selftests attach as a user would (xprobectl attach): no skeletons
TBPF_OBJS := $(patsubst selftests/bpf/%.bpf.c,$(BUILD)/tbpf/%.bpf.o,$(wildcard selftests/bpf/*.bpf.c))
PROG_SRCS := $(wildcard selftests/progs/*.c bench/progs/*.c)
# uh32.S: a process that is not an x86-64 one, built as i386 (uh32) and x32
# (uhx32), without libc (no multilib needed: the assembler and ld do both).
# args_static: args.c linked statically (selftest 48); seccompw_static
# (selftest 49). cxxthrow: C++ (g++),
# with libstdc++ and libgcc_s, and linked statically; rpanic: Rust (Debian's
# rustc); gostack: Go (Debian's golang-go) (selftest 49). tailx: with its
# library libtailx.so (selftests/progs/lib/), found beside it (selftest 40).
PROGS     := $(addprefix $(BUILD)/progs/,$(notdir $(PROG_SRCS:.c=)) uh32 uhx32 args_static \
	     seccompw_static cxxthrow cxxthrow_static rpanic gostack libtailx.so)
# module/ and its subsystems' folders (module/hooks/: kernel hooks; module/views/: views;
# module/uhooks/: user hooks)
MOD_DIRS  := module module/hooks module/views module/uhooks
MOD_FILES  = $(filter-out %.mod.c,$(wildcard $(foreach d,$(MOD_DIRS),$(d)/*.c $(d)/*.S $(d)/*.h)))
MOD_SRCS  := $(MOD_FILES) $(wildcard module/uapi/*.h) module/Kbuild Kbuild
MODULE_KO := module/xprobes.ko
# Test-only modules: a livepatch (xp_klp), kernel threads for 90-preempt (xp_spin),
# a CPA change of the image mapping for 19-view-tables (xp_cpa), a function in
# module text called on demand for 55-view-module (xp_modfn, and xp_modfn2: the
# same under another name; xp_klpmod, a livepatch of its function) and
# 65-stress-modules (xp_modfn3, a third); a task held inside vfree() between
# vmalloc's unmap and its flush for 55 (xp_stall).
TEST_MODS := xp_klp xp_spin xp_cpa xp_modfn xp_modfn2 xp_modfn3 xp_klpmod xp_stall
TEST_KO   := $(TEST_MODS:%=selftests/modules/%.ko)

.PHONY: all deps kernel module test-modules ctl bpf progs initramfs images check demo vm bench clean help \
	deps-debug debug-kernel debug-initramfs kunit check-debug install uninstall deb check-dkms check-flavours

all: module test-modules bpf ctl progs

help:
	@sed -n '3,14p' Makefile

deps:
	@bash $(VM)/deps.sh
	@for k in $(sort $(KSERIES) $(KERNELS)); do \
		bash $(VM)/fetch-kernel.sh $(BUILD) $(call kseries,$$k) $(call kflavour,$$k) || exit; done

# A kernel is fetched on first use if 'make deps' did not fetch it.
$(BUILD)/kernel/%/.complete:
	@bash $(VM)/fetch-kernel.sh $(BUILD) $(call kseries,$*) $(call kflavour,$*)
kernel: $(KTREE)/.complete

# --- module -----------------------------------------------------------------
# Which headers the in-place build used: another KDIR rebuilds it, so a
# 'make module KDIR=...' never leaves a wrong-kernel module for the VM.
KDIR_STAMP := $(BUILD)/module.kdir
$(KDIR_STAMP): FORCE
	@mkdir -p $(@D); echo '$(abspath $(KDIR))' | cmp -s - $@ || echo '$(abspath $(KDIR))' > $@

module: $(MODULE_KO)
$(MODULE_KO): $(MOD_SRCS) $(KDIR_STAMP) | $(KDIR_DEP)
	$(MAKE) $(KBUILD_J) $(KBUILD_CC) -C $(KDIR) M=$(CURDIR) modules

# Test-only modules, built the same way. Their sources are not the in-place
# build's generated *.mod.c, which carry one kernel's symbol versions
# (copied for another kernel, that one refuses the module).
KLP_SRCS := $(filter-out %.mod.c,$(wildcard selftests/modules/*.c)) $(wildcard selftests/modules/*.h)
test-modules: $(TEST_KO)
$(TEST_KO) &: $(KLP_SRCS) selftests/modules/Kbuild $(KDIR_STAMP) | $(KDIR_DEP)
	$(MAKE) $(KBUILD_J) $(KBUILD_CC) -C $(KDIR) M=$(CURDIR)/selftests/modules modules

# The same two modules for another kernel, from copies (mtimes kept, so a
# rebuild compiles only what changed). copy_module DEST: the module's sources.
copy_module = mkdir -p $(1)/module/uapi $(MOD_DIRS:%=$(1)/%) && cp -p Kbuild $(1)/ && \
	for f in $(MOD_FILES) module/Kbuild module/uapi/*.h; do cp -p $$f $(1)/$$f || exit; done
$(BUILD)/k/%/module/xprobes.ko: $(MOD_SRCS) | $(BUILD)/kernel/%/.complete
	@$(call copy_module,$(BUILD)/k/$*)
	$(MAKE) $(KBUILD_J) $(KBUILD_CC) -C $(BUILD)/kernel/$*/headers M=$(BUILD)/k/$* modules
$(BUILD)/k/%/klp/xp_klp.ko $(BUILD)/k/%/klp/xp_spin.ko $(BUILD)/k/%/klp/xp_cpa.ko \
$(BUILD)/k/%/klp/xp_modfn.ko $(BUILD)/k/%/klp/xp_modfn2.ko \
$(BUILD)/k/%/klp/xp_modfn3.ko $(BUILD)/k/%/klp/xp_klpmod.ko $(BUILD)/k/%/klp/xp_stall.ko: $(KLP_SRCS) selftests/modules/Kbuild \
		| $(BUILD)/kernel/%/.complete
	@mkdir -p $(@D) && cp -p $(KLP_SRCS) selftests/modules/Kbuild $(@D)/
	$(MAKE) $(KBUILD_J) $(KBUILD_CC) -C $(BUILD)/kernel/$*/headers M=$(@D) modules

# Pattern-rule results make would otherwise delete as intermediate.
.PRECIOUS: $(BUILD)/k/%/module/xprobes.ko $(BUILD)/k/%/klp/xp_klp.ko $(BUILD)/k/%/klp/xp_spin.ko \
	$(BUILD)/k/%/klp/xp_cpa.ko $(BUILD)/k/%/klp/xp_modfn.ko $(BUILD)/k/%/klp/xp_modfn2.ko \
	$(BUILD)/k/%/klp/xp_modfn3.ko $(BUILD)/k/%/klp/xp_klpmod.ko $(BUILD)/k/%/klp/xp_stall.ko \
	$(BUILD)/kernel/%/.complete

# --- BPF (CO-RE: one set of objects for every kernel; vmlinux.h from 6.12's BTF)
$(BUILD)/bpf/vmlinux.h: | $(BTF_DEP)
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

# Objects that use atomic exchange need BPF ISA v3 (kernel 5.12+).
BPF_CPU_metrics := -mcpu=v3
BPF_CPU_hookcount := -mcpu=v3
BPF_CPU_uhevents := -mcpu=v3
BPF_CPU_uhrecs := -mcpu=v3
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/bpf/vmlinux.h
	$(CLANG) -g -O2 -target bpf $(BPF_CPU_$*) -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -Ibpf -Imodule/uapi \
		-c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

bpf: $(BPF_OBJS) $(BPF_SKELS)

# --- xprobectl ----------------------------------------------------------------
ctl: $(BUILD)/ctl/xprobectl
$(BUILD)/ctl/profile.pb-c.c $(BUILD)/ctl/profile.pb-c.h &: ctl/profile.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(BUILD)/ctl -Ictl $<
$(BUILD)/ctl/profile.pb-c.o: $(BUILD)/ctl/profile.pb-c.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -I$(BUILD)/ctl -c $< -o $@
$(BUILD)/ctl/%.o: ctl/%.c $(wildcard ctl/*.h) module/uapi/xprobes.h $(BPF_SKELS) $(BUILD)/ctl/sysnames.h \
		$(BUILD)/ctl/profile.pb-c.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(XCFLAGS) -I$(BUILD)/bpf -I$(BUILD)/ctl -Ibpf -c $< -o $@
# Syscall names by number, for xprobectl latency, from the libc's kernel headers.
SYSCALL_HDR ?= /usr/include/x86_64-linux-gnu/asm/unistd_64.h
$(BUILD)/ctl/sysnames.h: $(SYSCALL_HDR)
	@mkdir -p $(@D)
	awk '$$1 == "#define" && $$2 ~ /^__NR_/ { printf "\t[%d] = \"%s\",\n", $$3, substr($$2, 6) }' $< > $@.tmp && mv $@.tmp $@
$(BUILD)/ctl/xprobectl: $(CTL_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CTL)
# Which interface xprobectl speaks (XPROBES_A_ABI: uapi/xprobes.h and the
# module's tracepoint arguments, trace.h), as module/Kbuild computes it for
# the module: the two talk only when they agree.
XP_ABI := $(shell cat module/uapi/xprobes.h module/trace.h | sha256sum | cut -c1-8)
ifeq ($(XP_ABI),)
$(error cannot hash module/uapi/xprobes.h and module/trace.h: is sha256sum installed?)
endif
$(BUILD)/ctl/nl.o: module/trace.h
$(BUILD)/ctl/nl.o: XCFLAGS += -DXPROBES_ABI=0x$(XP_ABI)
# For selftest 02: an xprobectl that claims another interface than the module's.
$(BUILD)/ctl/nl-otherabi.o: ctl/nl.c $(wildcard ctl/*.h) module/uapi/xprobes.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(XCFLAGS) -DXPROBES_ABI=0x0badab1 -c $< -o $@
$(BUILD)/ctl/xprobectl-otherabi: $(filter-out $(BUILD)/ctl/nl.o,$(CTL_OBJS)) $(BUILD)/ctl/nl-otherabi.o
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CTL)

# --- selftest helper programs -----------------------------------------------
progs: $(PROGS) $(TBPF_OBJS)
$(BUILD)/tbpf/%.bpf.o: selftests/bpf/%.bpf.c $(BUILD)/bpf/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -c $< -o $@
PROG_DEPS := $(wildcard selftests/progs/*.h) module/uapi/xprobes.h module/uhooks/urec.h $(BPF_SKELS)
$(BUILD)/progs/%: selftests/progs/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -I$(BUILD)/bpf -Ibpf -o $@ $< -lpthread -lbpf -lelf -lz
$(BUILD)/progs/uh32: selftests/progs/uh32.S
	@mkdir -p $(@D)
	$(CC) -m32 -nostdlib -static -o $@ $<
$(BUILD)/progs/args_static: selftests/progs/args.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -static -o $@ $<
$(BUILD)/progs/seccompw_static: selftests/progs/seccompw.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -static -o $@ $< -lpthread
$(BUILD)/progs/cxxthrow: selftests/progs/cxxthrow.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -Wall -o $@ $<
$(BUILD)/progs/cxxthrow_static: selftests/progs/cxxthrow.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -Wall -static -o $@ $<
$(BUILD)/progs/rpanic: selftests/progs/rpanic.rs
	@mkdir -p $(@D)
	/usr/bin/rustc -O -C panic=unwind -C strip=debuginfo -o $@ $<
$(BUILD)/progs/gostack: selftests/progs/gostack.go
	@mkdir -p $(@D) $(BUILD)/gocache
	cd $(@D) && GOCACHE=$(BUILD)/gocache GOPATH=$(BUILD)/gopath GO111MODULE=off \
		go build -o $@ $(CURDIR)/$<
$(BUILD)/progs/libtailx.so: selftests/progs/lib/libtailx.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $<
$(BUILD)/progs/tailx: selftests/progs/tailx.c $(BUILD)/progs/libtailx.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< -L$(BUILD)/progs -ltailx -Wl,-rpath,'$$ORIGIN'
$(BUILD)/progs/uhx32: selftests/progs/uh32.S
	@mkdir -p $(@D)
	$(CC) -mx32 -nostdlib -static -o $@ $<
$(BUILD)/progs/%: bench/progs/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -I$(BUILD)/bpf -Ibpf -o $@ $< -lpthread -lbpf -lelf -lz -lm

# --- VM -----------------------------------------------------------------------
initramfs: $(INITRD)
# What both initramfs images carry besides the modules.
INITRD_FILES = $(BUILD)/ctl/xprobectl=xp/bin/xprobectl \
	$(BUILD)/ctl/xprobectl-otherabi=xp/bin/xprobectl-otherabi \
	$(foreach p,$(PROGS),$(p)=xp/bin/$(notdir $(p))) \
	$(foreach o,$(BPF_OBJS),$(o)=xp/bpf/$(notdir $(o))) \
	$(foreach o,$(TBPF_OBJS),$(o)=xp/tbpf/$(notdir $(o))) \
	selftests=xp/selftests bench=xp/bench \
	$(BUILD)/vm/ids.sh=xp/selftests/ids.sh
INITRD_DEPS = all $(BUILD)/ctl/xprobectl-otherabi $(BUILD)/vm/ids.sh $(VM)/init $(wildcard bench/*.sh) $(VM)/mkinitramfs.sh \
	$(BUILD)/vm/guest-bins.present $(wildcard selftests/*.sh selftests/tests/* selftests/debug/*.sh selftests/debug/tests/*)

$(BUILD)/vm/base.cpio.gz: $(INITRD_DEPS)
	@mkdir -p $(@D)
	@echo "  INITRAMFS $@"
	@bash $(VM)/mkinitramfs.sh $@ $(BUILD)/kernel/6.12/modules \
		$(MODULE_KO)=xp/xprobes.ko $(foreach m,$(TEST_MODS),selftests/modules/$(m).ko=xp/$(m).ko) \
		$(INITRD_FILES)
$(BUILD)/k/%/base.cpio.gz: $(INITRD_DEPS) $(BUILD)/k/%/module/xprobes.ko $(BUILD)/k/%/klp/xp_klp.ko
	@echo "  INITRAMFS $@"
	@bash $(VM)/mkinitramfs.sh $@ $(BUILD)/kernel/$*/modules \
		$(BUILD)/k/$*/module/xprobes.ko=xp/xprobes.ko \
		$(foreach m,$(TEST_MODS),$(BUILD)/k/$*/klp/$(m).ko=xp/$(m).ko) $(INITRD_FILES)

# Which of guest-bins this host has: rewritten only when that changes (make
# bench installs the servers), so the images follow without a rebuild each time.
$(BUILD)/vm/guest-bins.present: $(VM)/guest-bins FORCE
	@mkdir -p $(@D)
	@for b in $$(grep -v '^#' $<); do [ -x "$$b" ] && echo "$$b"; done > $@.tmp; \
	 cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
FORCE:

$(BUILD)/vm/ids.sh: module/uapi/xprobes.h selftests/gen-ids.sh
	@mkdir -p $(@D)
	@sh selftests/gen-ids.sh $< > $@

VMK := --kernel $(KIMAGE) --initrd $(INITRD)
vm: initramfs
	@bash $(RUNVM) $(VMK) --timeout $(VM_TIMEOUT) $(if $(VM_SHARE),--share $(VM_SHARE)) -- '$(CMD)'

# The test image of each kernel in KERNELS, made side by side (the programs
# first: their rules are not all written for -j).
images: all
	@$(MAKE) --no-print-directory -j2 $(foreach k,$(KERNELS),$(call initrd_of,$(k)))

# check.sh gets each kernel as NAME=IMAGE:INITRD.
check: deps
	@$(MAKE) --no-print-directory images
	@XP_KERNELS='$(foreach k,$(KERNELS),$(k)=$(BUILD)/kernel/$(k)/vmlinuz:$(call initrd_of,$(k)))' \
		bash selftests/check.sh

demo: deps
	@$(MAKE) --no-print-directory initramfs
	@bash $(RUNVM) $(VMK) --timeout $(VM_TIMEOUT) --script selftests/demo.sh

# Overhead experiments, in the VM; results land in build/bench (docs/experiments.md).
# XP_ICOUNT=0 (default) runs the guest on instruction-count time; XP_ICOUNT= for wall time.
# BENCH_ONLY="hit-cost op-cost" runs only those parts (bench/run.sh names them),
# each part in a VM of its own (bench/vm.sh).
bench: deps
	@bash $(VM)/deps.sh bench
	@$(MAKE) --no-print-directory initramfs
	@BENCH_ONLY='$(BENCH_ONLY)' METRICS_PARTS='$(METRICS_PARTS)' bash bench/vm.sh $(BUILD)/bench

# --- install ------------------------------------------------------------------
# The module for the running kernel (or KREL) from its headers, built in a copy
# of the sources, into /lib/modules/KREL/updates; xprobectl (built with this
# machine's BTF: nothing is fetched) and its man page under PREFIX.
IKDIR := /lib/modules/$(KREL)/build
IBUILD := $(BUILD)/install
SYS_BTF := $(firstword $(wildcard /sys/kernel/btf/vmlinux) $(VMLINUX_BTF))
install:
	@[ -e $(IKDIR)/Makefile ] || { echo "install: no kernel headers for $(KREL) in $(IKDIR):" \
		"apt install linux-headers-$(KREL), or give KREL=" >&2; exit 1; }
	@$(MAKE) --no-print-directory ctl BUILD=$(IBUILD) VMLINUX_BTF=$(SYS_BTF)
	@$(call copy_module,$(IBUILD)/$(KREL))
	$(MAKE) $(KBUILD_J) $(KBUILD_CC) -C $(IKDIR) M=$(IBUILD)/$(KREL) modules
	install -D -m 644 $(IBUILD)/$(KREL)/module/xprobes.ko $(DESTDIR)/lib/modules/$(KREL)/updates/xprobes.ko
	$(if $(DESTDIR),,depmod -a $(KREL))
	install -D -m 755 $(IBUILD)/ctl/xprobectl $(DESTDIR)$(PREFIX)/sbin/xprobectl
	install -D -m 644 docs/xprobectl.8 $(DESTDIR)$(PREFIX)/share/man/man8/xprobectl.8
	install -d $(DESTDIR)/lib/systemd/system
	sed "s|/usr/sbin/xprobectl|$(PREFIX)/sbin/xprobectl|" systemd/xprobes-metrics@.service > $(DESTDIR)/lib/systemd/system/xprobes-metrics@.service
	$(if $(DESTDIR),,[ ! -d /run/systemd/system ] || systemctl daemon-reload)

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KREL)/updates/xprobes.ko
	$(if $(DESTDIR),,[ ! -d /lib/modules/$(KREL) ] || depmod -a $(KREL))
	rm -f $(DESTDIR)$(PREFIX)/sbin/xprobectl $(DESTDIR)$(PREFIX)/share/man/man8/xprobectl.8
	rm -f $(DESTDIR)/lib/systemd/system/xprobes-metrics@.service

# Debian packages, with Debian's tools, from a copy of the tree (tracked and
# new files; not build/): xprobes-dkms and xprobectl, into $(BUILD)/deb.
DEB := $(BUILD)/deb
deb:
	@bash $(VM)/deps.sh deb
	@for v in "$$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)" "$$(dpkg-parsechangelog -S Version)"; do \
		[ "$$v" = "$(VERSION)" ] || { echo "deb: version $$v (dkms.conf, debian/changelog) is not $(VERSION)" >&2; exit 1; }; done
	@rm -rf $(DEB) && mkdir -p $(DEB)/xprobes-$(VERSION)
	@git ls-files -z --cached --others --exclude-standard | xargs -0 cp -p --parents -t $(DEB)/xprobes-$(VERSION)
	cd $(DEB)/xprobes-$(VERSION) && dpkg-buildpackage -us -uc -b
	@ls $(DEB)/*.deb

# Installs the packages on this machine with the 6.1 and 6.12 headers, checks
# DKMS built a module for each, boots each in the VM (selftests/dkms.sh).
check-dkms: deb
	@$(MAKE) --no-print-directory images
	@bash selftests/dkms.sh $(DEB) $(foreach k,$(KERNELS),$(BUILD)/kernel/$(k)=$(call initrd_of,$(k)))

# Debian's other flavours: warning-free builds against the -cloud and -rt
# headers of both series, the -rt kernels booted with the selftests.
FLAVOURS ?= 6.12-rt 6.1-rt 6.12-cloud 6.1-cloud
check-flavours: all
	@bash selftests/flavours.sh $(FLAVOURS)

# --- debug kernel: KUnit, KASAN, lockdep, kmemleak (selftests/debug) ---------
# The module is built twice against it, plain and with its KUnit suites, each
# from a copy of the sources (Kbuild builds external modules in place).
DBG      := $(BUILD)/debug
DKDIR    := $(DBG)/obj
DKIMAGE  := $(DKDIR)/arch/x86/boot/bzImage
DINITRD  := $(DBG)/vm/base.cpio.gz
DMODS    := $(DBG)/mod/plain/module/xprobes.ko $(DBG)/mod/kunit/module/xprobes.ko
DTEST_KO := $(TEST_MODS:%=$(DBG)/mod/klp/%.ko)

deps-debug:
	@bash $(VM)/deps.sh debug
debug-kernel: deps-debug
	@bash selftests/debug/build-kernel.sh $(BUILD)

# As selftests/flavours.sh holds the other flavours: a warning fails the
# build (KASAN's larger frames showed -Wframe-larger-than= here first). A
# warning is "warning:" as a word (gcc, objtool, make, modpost), not a
# path that has the word in it.
$(DBG)/mod/%/module/xprobes.ko: $(MOD_SRCS) $(DBG)/.stamp
	@rm -rf $(DBG)/mod/$*
	@$(call copy_module,$(DBG)/mod/$*)
	@echo "  MODULE  $(DBG)/mod/$* (log: $(DBG)/mod/$*.log)"
	@$(MAKE) $(KBUILD_J) $(KBUILD_CC) -C $(DKDIR) M=$(DBG)/mod/$* \
		$(if $(filter kunit,$*),XPROBES_KUNIT=1) modules > $(DBG)/mod/$*.log 2>&1 || \
		{ tail -n 20 $(DBG)/mod/$*.log >&2; rm -f $@; exit 1; }
	@! grep -iE '(^|[[:space:]:])warning:' $(DBG)/mod/$*.log >&2 || \
		{ echo "debug module ($*): built with warnings, see $(DBG)/mod/$*.log" >&2; rm -f $@; exit 1; }
$(DTEST_KO) &: $(KLP_SRCS) selftests/modules/Kbuild $(DBG)/.stamp
	@rm -rf $(@D) && mkdir -p $(@D)
	@cp $(KLP_SRCS) selftests/modules/Kbuild $(@D)/
	$(MAKE) $(KBUILD_J) $(KBUILD_CC) -C $(DKDIR) M=$(@D) modules

debug-initramfs: $(DINITRD)
$(DINITRD): $(INITRD_DEPS) $(DMODS) $(DTEST_KO)
	@mkdir -p $(@D)
	@echo "  INITRAMFS $@"
	@bash $(VM)/mkinitramfs.sh $@ $(DBG)/no-kmods \
		$(DBG)/mod/plain/module/xprobes.ko=xp/xprobes.ko \
		$(DBG)/mod/kunit/module/xprobes.ko=xp/xprobes-kunit.ko \
		$(foreach m,$(TEST_MODS),$(DBG)/mod/klp/$(m).ko=xp/$(m).ko) $(INITRD_FILES)

kunit: deps debug-kernel
	@$(MAKE) --no-print-directory debug-initramfs
	@bash selftests/check.sh --debug kunit

check-debug: deps debug-kernel
	@$(MAKE) --no-print-directory debug-initramfs
	@bash selftests/check.sh --debug

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/modules clean 2>/dev/null
	rm -rf $(BUILD)/ctl $(BUILD)/bpf $(BUILD)/progs $(BUILD)/vm $(BUILD)/k $(BUILD)/check $(DBG)/mod $(DBG)/vm
