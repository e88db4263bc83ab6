#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the suite as a git format-patch series against a kernel git tree.

    series.py TREE SUITE_DIR MSG_DIR OUT_DIR [BASE]

TREE is a kernel git tree (its working tree is not touched: the commits are
made with a private index over BASE, default HEAD), SUITE_DIR the suite as
it is now (tools/testing/selftests/perf_events of this repository), MSG_DIR
the commit messages (0-cover.msg, 1-*.msg, 2-*.msg; first line the
subject).  The suite is merged into the tree's own perf_events/: the
Makefile, .gitignore and config keep the tree's lines and get ours added,
settings keeps the larger timeout.  Patch 1: every file but the rdpmc*
programs; patch 2: the rdpmc* programs.  Each patch lists its new files
in MAINTAINERS under PERFORMANCE EVENTS SUBSYSTEM.  Prints the patches'
paths, cover letter first.
"""

import os
import re
import subprocess
import sys
import textwrap

SELFTEST = 'tools/testing/selftests/perf_events'
MERGED = ('Makefile', '.gitignore', 'config', 'settings')
SECTION = 'PERFORMANCE EVENTS SUBSYSTEM'


def die(msg):
    sys.stderr.write('series.py: %s\n' % msg)
    sys.exit(2)


def git(tree, *args, env=None, stdin=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(['git', '-C', tree] + list(args), env=e,
                       input=stdin, capture_output=True)
    if p.returncode:
        die('git %s: %s' % (' '.join(args[:2]),
                            p.stderr.decode(errors='replace').strip()))
    return p.stdout


def show(tree, base, path):
    p = subprocess.run(['git', '-C', tree, 'show', '%s:%s' % (base, path)],
                       capture_output=True)
    return p.stdout.decode() if p.returncode == 0 else None


def logical_lines(text):
    """Makefile lines with their backslash continuations joined."""
    out, cur = [], ''
    for line in text.splitlines():
        if line.endswith('\\'):
            cur += line[:-1] + ' '
            continue
        out.append(cur + line)
        cur = ''
    if cur:
        out.append(cur)
    return out


ASSIGN = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*)\s*(\+=|:=|\?=|=)\s*(.*)$')


def programs(makefile):
    progs = []
    for line in logical_lines(makefile):
        m = ASSIGN.match(line)
        if m and m.group(1) == 'TEST_GEN_PROGS':
            progs += m.group(3).split()
    return progs


FLAGS = ('CFLAGS', 'CPPFLAGS', 'LDFLAGS', 'LDLIBS')
COND = re.compile(r'^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b')
PROGVAR = 'USER_PAGE_TESTS'


def statements(lines):
    """Group Makefile lines into statements: comments stick to the next
    line, a conditional block is one statement."""
    out, cur, depth = [], [], 0
    for line in lines:
        cur.append(line)
        m = COND.match(line)
        if m and m.group(1).startswith('if'):
            depth += 1
        elif m and m.group(1) == 'endif':
            depth -= 1
        if depth == 0 and not line.strip().startswith('#') and line.strip():
            out.append(cur)
            cur = []
        elif depth == 0 and not line.strip():
            if len(cur) > 1:
                out.append(cur[:-1])
            cur = []
    if cur:
        out.append(cur)
    return out


def merge_makefile(theirs, ours, progs):
    """Their Makefile with ours merged in: our programs added to
    TEST_GEN_PROGS, our compiler and linker flags for our programs only
    (target-specific, after lib.mk), anything else before lib.mk."""
    ours_lines = logical_lines(ours)
    if theirs is None:
        out, done = [], False
        for line in ours_lines:
            m = ASSIGN.match(line)
            if m and m.group(1) == 'TEST_GEN_PROGS':
                if not done:
                    out.append('TEST_GEN_PROGS := ' + ' '.join(progs))
                done = True
                continue
            out.append(line)
        return '\n'.join(out) + '\n'

    their_words = {}
    for line in logical_lines(theirs):
        m = ASSIGN.match(line)
        if m:
            their_words.setdefault(m.group(1), set()).update(m.group(3).split())
    target = '$(%s:%%=$(OUTPUT)/%%)' % PROGVAR
    before, after = [], []
    for st in statements(ours_lines):
        code = [l for l in st if l.strip() and not l.strip().startswith('#')]
        if not code:
            continue
        if any(l.strip().startswith('# SPDX') for l in st) and len(code) == 0:
            continue
        if len(code) == 1 and re.match(r'^-?include\s+\.\./lib\.mk', code[0].strip()):
            continue
        st = [l for l in st if not l.strip().startswith('# SPDX')]
        assigns = [ASSIGN.match(l) for l in code if not COND.match(l)]
        if len(assigns) == 1 and assigns[0] and assigns[0].group(1) == 'TEST_GEN_PROGS':
            before.append([l for l in st if l not in code] +
                          ['%s := %s' % (PROGVAR, ' '.join(progs)),
                           'TEST_GEN_PROGS += $(%s)' % PROGVAR])
            continue
        if assigns and all(m and m.group(1) in FLAGS for m in assigns):
            new, keep = [], False
            for l in st:
                m = ASSIGN.match(l)
                if m and not COND.match(l):
                    words = [w for w in m.group(3).split()
                             if w not in their_words.get(m.group(1), ())]
                    if not words:
                        continue
                    keep = True
                    l = '%s: %s += %s' % (target, m.group(1), ' '.join(words))
                new.append(l)
            if keep:
                after.append(new)
            continue
        before.append(st)

    def block(sts):
        out = []
        for st in sts:
            if len(st) > 1 and out and out[-1] != '':
                out.append('')
            out += st
        return out
    lines = theirs.rstrip('\n').split('\n')
    at = next((i for i, l in enumerate(lines)
               if re.match(r'^-?include\s+\.\./lib\.mk', l.strip())), len(lines))
    head = lines[:at]
    while head and head[-1] == '':
        head.pop()
    res = head + [''] + block(before) + [''] + lines[at:]
    if after:
        res += [''] + block(after)
    return '\n'.join(res).rstrip('\n') + '\n'


def merge_lines(theirs, ours, keep, key=lambda l: l):
    """Their lines, then ours not yet there (keep(line) selects ours)."""
    if theirs is None:
        base = [l for l in ours.splitlines() if l.startswith('#')]
    else:
        base = theirs.rstrip('\n').split('\n')
    have = {key(l) for l in base}
    for l in ours.splitlines():
        if l.startswith('#') or not l.strip() or not keep(l):
            continue
        if key(l) not in have:
            base.append(l)
            have.add(key(l))
    return '\n'.join(base) + '\n'


def merge_settings(theirs, ours):
    def parse(t):
        d = {}
        for l in (t or '').splitlines():
            if '=' in l and not l.startswith('#'):
                k, v = l.split('=', 1)
                d[k.strip()] = v.strip()
        return d
    d, o = parse(theirs), parse(ours)
    lines = (theirs or '').rstrip('\n').split('\n') if theirs else []
    for k, v in o.items():
        if k not in d:
            lines.append('%s=%s' % (k, v))
        elif k == 'timeout' and v.isdigit() and d[k].isdigit() and \
                int(v) > int(d[k]):
            lines = ['%s=%s' % (k, v) if l.split('=', 1)[0].strip() == k
                     else l for l in lines]
    return '\n'.join(lines) + '\n'


def add_maintainers(text, paths):
    """F: lines for paths in SECTION, in alphabetic order among its F:."""
    lines = text.split('\n')
    try:
        start = lines.index(SECTION)
    except ValueError:
        return None
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    f_idx = [i for i in range(start, end) if lines[i].startswith('F:\t')]
    if not f_idx:
        return None
    new = ['F:\t' + p for p in paths]
    old = [lines[i] for i in f_idx]
    if all(n in old for n in new):
        return None
    merged = sorted(set(old + new), key=lambda l: l[3:])
    lines[f_idx[0]:f_idx[-1] + 1] = merged
    return '\n'.join(lines)


def fill(text, subs):
    """Replace @NAME@ placeholders and rewrap the paragraphs they were in
    (indented blocks are left alone) to 72 columns."""
    out = []
    for para in text.split('\n\n'):
        if '@' in para and not para.startswith(' '):
            for k, v in subs.items():
                para = para.replace('@%s@' % k, v)
            para = textwrap.fill(' '.join(para.split()), 72,
                                 break_on_hyphens=False, break_long_words=False)
        else:
            for k, v in subs.items():
                para = para.replace('@%s@' % k, v)
        out.append(para)
    return '\n\n'.join(out)


def main(argv):
    if len(argv) not in (5, 6):
        die('usage: series.py TREE SUITE_DIR MSG_DIR OUT_DIR [BASE]')
    tree, suite, msgs, out = (os.path.abspath(a) for a in argv[1:5])
    base = argv[5] if len(argv) == 6 else 'HEAD'
    if not os.path.isdir(os.path.join(tree, '.git')):
        die('%s is not a git tree (git init it, or use the cached tree)' % tree)
    if not os.path.isfile(os.path.join(tree, 'tools/testing/selftests/lib.mk')):
        die('%s is not a kernel tree' % tree)
    base = git(tree, 'rev-parse', '--verify', base + '^{commit}').decode().strip()
    ours = {}
    ignored = set()
    gi = os.path.join(suite, '.gitignore')
    if os.path.exists(gi):
        ignored = {l.strip().lstrip('/') for l in open(gi)
                   if l.strip() and not l.startswith('#')}
    for name in sorted(os.listdir(suite)):
        p = os.path.join(suite, name)
        if not os.path.isfile(p) or name in ignored or name.endswith('.o') \
                or name.startswith('.') and name != '.gitignore':
            continue
        ours[name] = open(p).read()
    if 'Makefile' not in ours:
        die('%s has no Makefile' % suite)
    progs = programs(ours['Makefile'])
    if not progs:
        die('no TEST_GEN_PROGS in %s/Makefile' % suite)

    def group(prog):
        return 2 if prog.startswith('rdpmc') else 1
    prog_files = {p + '.c': group(p) for p in progs}
    files = {1: [], 2: []}
    for name in ours:
        if name not in MERGED:
            files[prog_files.get(name, 1)].append(name)
    groups = [g for g in (1, 2) if files[g]]

    # Before KHDR_INCLUDES (5.18) each test named the tree's installed uapi
    # headers itself, as seccomp's Makefile does: the same here.
    libmk = show(tree, base, 'tools/testing/selftests/lib.mk') or ''
    if 'KHDR_INCLUDES' not in libmk:
        ours['Makefile'] = ours['Makefile'].replace(
            '$(KHDR_INCLUDES)', '-isystem ../../../../usr/include/')
    their = {n: show(tree, base, '%s/%s' % (SELFTEST, n)) for n in MERGED}
    their_progs = programs(their['Makefile']) if their['Makefile'] else []
    maint = show(tree, base, 'MAINTAINERS')
    # The author: the user's identity, else the tree's own (tree.sh gives
    # the cached trees one), so that make check needs no git identity.
    for cwd in (None, tree):
        ident = subprocess.run(['git', 'var', 'GIT_AUTHOR_IDENT'], cwd=cwd,
                               capture_output=True, text=True).stdout.strip()
        m = re.match(r'^(.*?) <([^>]*)>', ident)
        if m:
            break
    else:
        die('no author identity (git config user.name / user.email)')
    name, email = m.group(1), m.group(2)
    env = {'GIT_INDEX_FILE': os.path.join(out, '.index'),
           'GIT_AUTHOR_NAME': name, 'GIT_AUTHOR_EMAIL': email,
           'GIT_COMMITTER_NAME': name, 'GIT_COMMITTER_EMAIL': email}
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith('.patch') or f == '.index':
            os.unlink(os.path.join(out, f))
    git(tree, 'read-tree', base, env=env)

    def put(path, text):
        sha = git(tree, 'hash-object', '-w', '--stdin',
                  stdin=text.encode()).decode().strip()
        git(tree, 'update-index', '--add', '--cacheinfo',
            '100644,%s,%s' % (sha, path), env=env)

    msg_files = sorted(f for f in os.listdir(msgs) if f.endswith('.msg'))
    commit = base
    for g in groups:
        msgf = [f for f in msg_files if f.startswith('%d-' % g)]
        if not msgf:
            die('no commit message %d-*.msg in %s' % (g, msgs))
        sel = [p for p in progs if group(p) <= g]
        new = []
        for fname in files[g]:
            path = '%s/%s' % (SELFTEST, fname)
            if show(tree, base, path) is None:
                new.append(path)
            put(path, ours[fname])
        put(SELFTEST + '/Makefile',
            merge_makefile(their['Makefile'], ours['Makefile'], sel))
        if '.gitignore' in ours:
            put(SELFTEST + '/.gitignore',
                merge_lines(their['.gitignore'], ours['.gitignore'],
                            lambda l: l.strip().lstrip('/') not in progs
                            or l.strip().lstrip('/') in sel))
        if 'config' in ours and g == 1:
            put(SELFTEST + '/config',
                merge_lines(their['config'], ours['config'], lambda l: True,
                            key=lambda l: l.split('=')[0].strip()))
        if 'settings' in ours and g == 1:
            s = merge_settings(their['settings'], ours['settings'])
            if s != their['settings']:
                put(SELFTEST + '/settings', s)
        if maint is not None and new:
            mt = add_maintainers(maint, new)
            if mt is not None:
                maint = mt
                put('MAINTAINERS', mt)
        tree_sha = git(tree, 'write-tree', env=env).decode().strip()
        text = open(os.path.join(msgs, msgf[0])).read()
        gp = [p for p in progs if group(p) == g]
        subj, _, body = text.partition('\n')
        body = fill(body.strip('\n'), {
            'PROGS': ' and '.join(gp),
            'HEADERS': ', '.join(f for f in files[g] if f.endswith('.h'))
            or 'the header'})
        text = '%s\n\n%s\n\nSigned-off-by: %s <%s>\n' % (subj.strip(), body,
                                                         name, email)
        commit = git(tree, 'commit-tree', tree_sha, '-p', commit,
                     env=env, stdin=text.encode()).decode().strip()
    os.unlink(env['GIT_INDEX_FILE'])
    patches = git(tree, 'format-patch', '--cover-letter', '-o', out,
                  '%s..%s' % (base, commit), env=env).decode().split()
    cover = [p for p in patches if os.path.basename(p).startswith('0000-')][0]
    # get_maintainer.pl reads MAINTAINERS as the series leaves it.
    mpath = os.path.join(out, '.MAINTAINERS')
    with open(mpath, 'w') as f:
        f.write(show(tree, commit, 'MAINTAINERS') or '')
    gm = subprocess.run(['perl', 'scripts/get_maintainer.pl', '--no-git-fallback',
                         '--mpath', mpath] + [p for p in patches if p != cover],
                        cwd=tree, capture_output=True, text=True)
    os.unlink(mpath)
    gm_out = gm.stdout.strip() or '(get_maintainer.pl printed nothing: %s)' % \
        gm.stderr.strip()
    cmsg = open(os.path.join(msgs, [f for f in msg_files
                                    if f.startswith('0-')][0])).read()
    subj, _, body = cmsg.partition('\n')
    rel = show(tree, base, 'Makefile') or ''
    kv = '.'.join(re.search(r'^%s = (\d+)' % k, rel, re.M).group(1)
                  for k in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL')) \
        if re.search(r'^SUBLEVEL = \d+', rel, re.M) else base[:12]
    head = git(tree, 'log', '-1', '--format=%s', base).decode().strip()
    body = fill(body.strip('\n'), {
        'ALLPROGS': ' and '.join(progs),
        'UPSTREAMPROGS': ', '.join(their_progs) or 'none',
        'TREE': 'Linux %s (%s)' % (kv, head)})
    body = body.replace('@MAINTAINERS@', '\n'.join('  ' + l for l in
                                                   gm_out.splitlines()))
    c = open(cover).read()
    c = c.replace('*** SUBJECT HERE ***', subj.strip())
    c = c.replace('*** BLURB HERE ***', body)
    open(cover, 'w').write(c)
    if gm.returncode:
        die('get_maintainer.pl failed: %s' % gm.stderr.strip())
    print('\n'.join(patches))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
