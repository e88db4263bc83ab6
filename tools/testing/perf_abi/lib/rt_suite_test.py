#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rt_suite.py: an install tree's programs, -t names matched and made into
the harness's filter options, and when a tree is up to date (complete,
newer than the suite).  unit/select_test.sh has the harness's -l table.
(unit/runner_parts_test.sh)"""
import os, shutil, sys, tempfile, unittest
sys.dont_write_bytecode = True
import rt_base, rt_suite as s

NAMES = ['global.a', 'global.b', 'page.x.one', 'page.y.one', 'page.x.two', 'page.y.two']


class Suite(unittest.TestCase):
    def setUp(self):
        self.t = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.t)

    def test_tree_programs(self):
        rt_base.write(self.t + '/kselftest-list.txt', 'perf_events:mmap_page\r\nperf_events:rdpmc\nnoise\n')
        self.assertEqual(s.tree_progs(self.t), [('perf_events', 'mmap_page'), ('perf_events', 'rdpmc')])
        self.assertEqual(s.tree_coll(self.t, 'rdpmc'), 'perf_events')
        self.assertEqual(s.tree_coll(self.t, 'nope'), '')

    def test_match_and_filter(self):
        self.assertEqual(s.match_tests(NAMES, 'one'), ['page.x.one', 'page.y.one'])
        self.assertEqual(s.match_tests(NAMES, 'global.*'), ['global.a', 'global.b'])
        self.assertEqual(s.match_tests(NAMES, 'global'), [])
        self.assertEqual(s.compress_filter(NAMES, ['global.a', 'global.b']), ['-f global'])
        self.assertEqual(s.compress_filter(NAMES, ['page.x.one', 'page.y.one']), ['-t one'])
        self.assertEqual(s.compress_filter(NAMES, ['page.x.one']), ['-r page.x.one'])

    def test_a_tree_without_its_runner_is_never_up_to_date(self):
        rt_base.write(self.t + '/kselftest-list.txt', 'perf_events:mmap_page\n')
        os.utime(self.t + '/kselftest-list.txt', (4e9, 4e9)) # newer than any source
        self.assertFalse(s.Suite().tree_fresh(self.t))
        rt_base.write(self.t + '/run_kselftest.sh', '#!/bin/sh\n')
        os.chmod(self.t + '/run_kselftest.sh', 0o755)
        self.assertTrue(s.Suite().tree_fresh(self.t))
        os.utime(self.t + '/kselftest-list.txt', (1, 1)) # older than the suite
        self.assertFalse(s.Suite().tree_fresh(self.t))


if __name__ == '__main__':
    unittest.main()
