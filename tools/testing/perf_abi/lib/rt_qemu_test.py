#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rt_qemu.py: a matrix file read, and a guest's time limit from the boot
allowance and each program's settings timeout.  Guests themselves:
unit/guest_fake_test.sh, unit/results_test.sh.  (unit/runner_parts_test.sh)"""
import os, shutil, sys, tempfile, unittest
sys.dont_write_bytecode = True
import rt_base, rt_qemu as q


class Guests(unittest.TestCase):
    def setUp(self):
        self.t = tempfile.mkdtemp()
        self.g = q.Guests()

    def tearDown(self):
        shutil.rmtree(self.t)

    def test_matrix_file(self):
        self.g.matrix_file = self.t + '/m.list'
        rt_base.write(self.g.matrix_file, '# kernels\r\n\ndebian:6.12-cloud-amd64  # the LTS\r\n/k/bzImage\n')
        self.assertEqual(self.g.matrix_specs(), ['debian:6.12-cloud-amd64', '/k/bzImage'])
        for text, msg in (('a b\n', 'one SPEC a line'), ('-x\n', 'is not a kernel SPEC'), ('# none\n', 'lists no kernel')):
            rt_base.write(self.g.matrix_file, text)
            with self.assertRaises(rt_base.Fail) as f:
                self.g.matrix_specs()
            self.assertIn(msg, f.exception.msg)

    def test_limit_from_settings(self):
        os.environ['PERF_ABI_BOOT_ALLOWANCE'] = '10'
        self.g.kvm, self.g.ncells, self.g.tree = False, 1, {'x86_64': self.t}
        rt_base.write(self.t + '/kselftest-list.txt', 'a:p\nb:p\n')
        os.makedirs(self.t + '/a')
        rt_base.write(self.t + '/a/settings', 'timeout=7\n')
        self.assertEqual(self.g.limit_for('x86_64', 'x86_64')[0], 10 + 7 + 45)
        rt_base.write(self.t + '/a/settings', 'timeout=abc\n')
        with self.assertRaises(rt_base.Fail) as f:
            self.g.limit_for('x86_64', 'x86_64')
        self.assertIn('timeout=abc is not a number of seconds', f.exception.msg)


if __name__ == '__main__':
    unittest.main()
