#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""run_tests.py's command line: what options() takes and refuses.  The
whole program: unit/run_tests_test.sh, unit/results_test.sh.
(unit/runner_parts_test.sh)"""
import sys, unittest
sys.dont_write_bytecode = True
import rt_base, run_tests as r


def options(*argv):
    o = r.Runner()
    o.options(list(argv))
    return o


class Options(unittest.TestCase):
    def refused(self, msg, *argv):
        with self.assertRaises(rt_base.Fail) as f:
            options(*argv)
        self.assertIn(msg, f.exception.msg)
        self.assertEqual(f.exception.status, 2)

    def test_taken(self):
        o = options('-t', 'mmap_page', '-t', 'rdpmc:agree.*', '--repeat', '3', '-o', 'out')
        self.assertEqual((o.selectors, o.repeat, o.outdir, o.mode), (['mmap_page', 'rdpmc:agree.*'], 3, 'out', 'host'))
        o = options('--compare', 'debian:6.1-cloud-amd64', '/k/bzImage', '--smp', '4', '--memory', '1G')
        self.assertEqual((o.mode, o.old_spec, o.new_spec, o.smp, o.memory),
                         ('compare', 'debian:6.1-cloud-amd64', '/k/bzImage', '4', '1024M'))

    def test_refused(self):
        self.refused('--label goes with --kernel', '--label', 'x')
        self.refused('give one -o', '-o', 'a', '-o', 'b')
        self.refused('is not a number of runs', '--repeat', '0')
        self.refused('a control character', '-o', 'a\nb')
        self.refused('--smp goes with --kernel', '--smp', '2')
        self.refused('one at a time', '--kernel', 'k', '--matrix')
        self.refused("unknown option '--nope'", '--nope')


if __name__ == '__main__':
    unittest.main()
