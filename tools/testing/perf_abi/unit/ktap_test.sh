#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lib/ktap.py on crafted KTAP, exit codes, JUnit/JSON and guest consoles
# (unit/ktap_test.py).  Prints KTAP; exit 1 on failure.
exec python3 "$(dirname "$0")/ktap_test.py"
