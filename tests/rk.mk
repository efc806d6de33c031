# SPDX-License-Identifier: GPL-2.0
# The guest's programs, built as the kernel's kselftests are, by the
# unpacked tree's tools/testing/selftests/lib.mk: every *.c of the
# directory that includes this (tests/, bench/) is one static program.
# scripts/initramfs.sh runs, for each directory:
#   make -C DIR SELFTESTS=SRC/tools/testing/selftests OUTPUT=OUT \
#        CC=COMPILER KHDR_INCLUDES="-isystem UAPI" RK_DEPS=STAMP
# SELFTESTS: where lib.mk and kselftest_harness.h are; KHDR_INCLUDES: the
# installed uapi headers of the patched tree; RK_DEPS: files whose change
# rebuilds every program (the headers' install stamp).
ifeq ($(SELFTESTS),)
$(error SELFTESTS: the tree's tools/testing/selftests is needed)
endif
ifeq ($(OUTPUT),)
$(error OUTPUT: the directory for the programs is needed)
endif
ifneq ($(RK_DEPS),)
ifeq ($(wildcard $(RK_DEPS)),)
$(error RK_DEPS: no $(RK_DEPS))
endif
endif
RK_TOP := $(realpath $(dir $(lastword $(MAKEFILE_LIST)))/..)

TEST_GEN_PROGS := $(patsubst %.c,%,$(wildcard *.c))
CFLAGS += -static -O2 -Wall -Wextra -Wno-unused-parameter -Wno-clobbered \
	  -Werror -pthread $(KHDR_INCLUDES) -I $(SELFTESTS) \
	  -I $(RK_TOP)/tests -I $(RK_TOP)/bench
LDLIBS += -lm
# Prerequisites of every program, left off its link line by lib.mk.
LOCAL_HDRS += $(wildcard $(RK_TOP)/tests/*.h $(RK_TOP)/bench/*.h) \
	      $(RK_TOP)/tests/rk.mk $(RK_DEPS)

include $(SELFTESTS)/lib.mk
