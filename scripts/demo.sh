#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
. "$(dirname "$0")/lib.sh"
die "make demo is not implemented yet (tracked in issue 4)"
