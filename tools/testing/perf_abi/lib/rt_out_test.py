#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rt_out.py: the run's directory claimed and locked, latest staged under
a name of its own, a dead run's leftovers swept by their lock, and
summary.json's exit.  (unit/runner_parts_test.sh)"""
import os, shutil, sys, tempfile, time, unittest
sys.dont_write_bytecode = True
import rt_base, rt_out as o


class Out(unittest.TestCase):
    def setUp(self):
        self.t = tempfile.mkdtemp()
        o.Out.made, o.Out.wrote, o.Out.claimed, o.Out.runs = [], [], None, None
        o.Out.work = self.t + '/work'
        os.mkdir(o.Out.work)

    def tearDown(self):
        shutil.rmtree(self.t)

    def test_claim_makes_locks_and_notes_what_it_made(self):
        d = o.out_claim(self.t + '/a/b', '')
        self.assertEqual(o.Out.made, [self.t + '/a', self.t + '/a/b'])
        self.assertEqual(rt_base.read(o.Out.work + '/made').split(), o.Out.made)
        self.assertIs(o.lock_nb(d), False, 'locked by the claim')
        with self.assertRaises(rt_base.Fail) as f:
            o.out_claim(d, '')
        self.assertIn('another run_tests.sh is writing', f.exception.msg)

    def test_a_users_latest_staging_names_are_left_alone(self):
        os.mkdir(self.t + '/runs')
        open(self.t + '/runs/notes', 'w').close()
        d = o.out_claim(self.t + '/runs', 'host')
        name = os.path.basename(d)
        os.mkdir(self.t + '/runs/.latest.' + name) # what main staged latest as
        src = self.t + '/src'
        os.mkdir(src)
        rt_base.write(src + '/summary.json', '{}\n')
        self.assertTrue(o.out_publish(src, True))
        self.assertEqual(os.readlink(self.t + '/runs/latest'), name)
        self.assertTrue(os.path.isdir(self.t + '/runs/.latest.' + name))

    def test_sweep_takes_a_dead_runs_leftovers_not_a_live_ones(self):
        vm = self.t + '/vm'
        for r in ('run.dead', 'run.live'):
            os.makedirs(vm + '/' + r)
        os.mkdir(self.t + '/out')
        rt_base.write(vm + '/run.dead/made', self.t + '/out\n')
        live = o.lock_nb(vm + '/run.live')
        now = time.time
        try:
            time.time = lambda: now() + 10 # (a work directory younger than 5 s is never swept)
            o.sweep(vm)
        finally:
            time.time = now
        self.assertEqual(sorted(os.listdir(vm)), ['run.live'])
        self.assertFalse(os.path.exists(self.t + '/out'))
        os.close(live)

    def test_json_exit(self):
        f = self.t + '/summary.json'
        rt_base.write(f, '{\n "kernels": [\n  {\n   "exit": 0\n  }\n ],\n "exit": 0\n}\n')
        o.Reports().json_exit(f, 2) # the top level's (indent 1), not a kernel's
        self.assertEqual(rt_base.read(f), '{\n "kernels": [\n  {\n   "exit": 0\n  }\n ],\n "exit": 2\n}\n')


if __name__ == '__main__':
    unittest.main()
