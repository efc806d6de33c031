# SPDX-License-Identifier: GPL-2.0
# Reclaimable kernel stacks: build, boot and test harness.
# Variables: ARCH (x86_64), CONFIG (base, debug), BUILD (./build).
# Everything generated goes under $(BUILD), which git ignores.

S := scripts

.PHONY: help deps source kernel initramfs boot check demo docs bench stress matrix mutants lint bisect tcg-keyflip realworld tree export clean

help:
	@sed -n 's/^- `\(make [a-z]*\)`: /\1\t/p' README.md | expand -t 18

deps:
	$(S)/deps.sh

source: deps
	$(S)/source.sh

kernel: source
	$(S)/kernel.sh

initramfs: source
	$(S)/initramfs.sh

# Interactive guest shell on the serial console (exit with Ctrl-A x).
boot: kernel initramfs
	$(S)/boot.sh shell shell

check:
	$(S)/check.sh

# Both build what they need (the feature config) themselves.
demo:
	$(S)/demo.sh

bench:
	$(S)/bench.sh

# The series' documentation through the kernel's Sphinx build.
docs:
	$(S)/docs.sh

# A Debian userland with systemd and real servers on the feature kernel.
realworld:
	$(S)/realworld.sh

# The full stress test on the debug kernel (tests/reclaim_stress.c).
stress:
	$(S)/stress.sh

# The feature in every configuration users build: full builds, one per
# option (UP, PREEMPT_RT refused; MEMCG=n, NUMA=n, each preemption model).
matrix: source
	$(S)/config-matrix.sh full

# Each fixed bug of mutants/ put back: the tests must catch it.
mutants:
	$(S)/mutants.sh

# sparse and W=1 over the files the series touches: the unpatched tree's
# diagnostics first (lint/*.baseline), then the series' (none may be new).
lint: source
	$(S)/lint.sh baseline
	$(S)/lint.sh

# Every step of the series compiled with the feature on and off, and
# checkpatch'd: BISECT=full builds the whole kernel at each step.
bisect: source
	$(S)/bisect.sh $(or $(BISECT),objects)

# Does this QEMU's multi-threaded TCG survive text patching? (boot.sh's
# BOOT_TCG; about 8 minutes.)
tcg-keyflip:
	$(S)/tcg-keyflip.sh

tree: deps
	$(S)/tree.sh

export:
	$(S)/export.sh

clean:
	rm -rf build
