#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rt_base.py: quoting, a helper's message, architectures, the processes
a run started ended by stop_all().  (unit/runner_parts_test.sh)"""
import os, subprocess, sys, unittest
sys.dont_write_bytecode = True
import rt_base as b


class Base(unittest.TestCase):
    def test_q_quotes_control_characters_only(self):
        self.assertEqual(b.q('plain name'), 'plain name')
        self.assertEqual(b.q('a\tb\nc'), "$'a\\tb\\nc'")

    def test_last_line_drops_the_helpers_name(self):
        self.assertEqual(b.last_line('noise\nimage.sh: not a kernel image\n\n', 'image|debian'),
                         'not a kernel image')
        self.assertEqual(b.last_line('', 'image'), '')

    def test_arch_names_and_aliases(self):
        self.assertEqual(b.arch_name('arm64'), 'arm64')
        self.assertIn(b.arch_name('aarch64'), (None, 'arm64'))
        self.assertIsNone(b.arch_name('vax'))
        self.assertIn('x86_64', b.ARCHES)

    def test_stop_all_ends_a_child_and_its_orphan(self):
        b.LIBC.prctl(36, 1, 0, 0, 0) # as main(): the orphan comes back to us
        p = subprocess.Popen(['sh', '-c', 'sleep 60 & exit 0'])
        p.wait()
        self.assertTrue(b.descendants(), 'the orphaned sleep is ours')
        b.stop_all()
        self.assertEqual(b.descendants(), set())


if __name__ == '__main__':
    unittest.main()
