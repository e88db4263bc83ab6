#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the suite as a git format-patch series against a kernel git tree.

    series.py [--fixes DIR] TREE SUITE_DIR MSG_DIR OUT_DIR [BASE]

TREE is a kernel git tree (its working tree is not touched: the commits are
made with a private index over BASE, default HEAD), SUITE_DIR the suite as
it is now (tools/testing/selftests/perf_events of this repository), MSG_DIR
the messages: 0-cover.msg and one per entry of PATCHES, first line the
subject, @NAME@ filled in from the code (a placeholder left is an
error).  The kernel fixes in DIR (git format-patch files) come first,
each one that applies to the tree, in the first version of DIR/NAME,
DIR/*/NAME that does; the cover letter's paragraphs marked
"[fix] " are kept only when one does.

Each patch of the suite carries only what it uses.  PATCHES says which
programs each adds and which top-level definitions it adds to files of an
earlier patch (the knob's main()); a file's version in a patch is its
top-level units (blank-line separated, a preprocessor block as one) that
the programs so far reach, from their tests and main() through the names
each unit defines and uses.  A program whose main() comes later ends with
TEST_HARNESS_MAIN until then.  The suite is merged into the tree's own
perf_events/: the Makefile, .gitignore and config keep the tree's lines
and get ours added, settings keeps the larger timeout.  MAINTAINERS is
not changed.  From and Signed-off-by are the identity of whoever runs
this (git var GIT_AUTHOR_IDENT); To and Cc come from get_maintainer.pl
without keyword matches.  Prints the patches' paths, cover letter first.
"""

import os
import re
import subprocess
import sys
import textwrap

SELFTEST = 'tools/testing/selftests/perf_events'
MERGED = ('Makefile', '.gitignore', 'config', 'settings')

# The suite's patches: message, the programs each adds, and the top-level
# definitions it adds to a file of an earlier patch.
PATCHES = (
    ('1-user-page.msg', ('mmap_page',), {}),
    ('2-user-reads.msg', ('rdpmc',), {}),
    ('3-user-access-knob.msg', (), {'rdpmc.c': ('main',)}),
    ('4-user-access-off.msg', ('user_access_off',), {}),
)


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


def words(items):
    """a; a and b; a, b and c"""
    return ' and '.join(filter(None, [', '.join(items[:-1]), items[-1]])) \
        if items else ''


def fill(text, subs):
    """Replace @NAME@ placeholders and rewrap the paragraphs they were in
    (indented blocks are left alone) to 72 columns."""
    out = []
    for para in text.split('\n\n'):
        if '@' in para and not para.startswith(' '):
            for k, v in subs.items():
                para = para.replace('@%s@' % k, v)
            # two spaces after a sentence, as written: kept through the
            # rewrap by gluing them (NBSP is no break for textwrap)
            para = re.sub(r'([.!?][)"\']?) {2,}(?=\S)', '\\1\u00a0\u00a0', para)
            para = textwrap.fill(' '.join(para.split(' ')).replace('\n', ' '), 72,
                                 break_on_hyphens=False, break_long_words=False)
            para = re.sub(' +', ' ', para).replace('\u00a0', ' ')
        else:
            for k, v in subs.items():
                para = para.replace('@%s@' % k, v)
        out.append(para)
    return '\n\n'.join(out)


def blank_c(text):
    """text with comments, strings and character constants blanked out
    (newlines kept), so that braces and names are code only."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * (min(j, n) - i - 1) + (c if j < n else ''))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


IDENT = re.compile(r'\b[A-Za-z_]\w*\b')
# A header's includes that only some of its units need, and what for.
INCLUDE_USES = {
    'glob.h': 'glob globfree glob_t GLOB_APPEND',
    'sys/file.h': 'flock LOCK_SH LOCK_EX LOCK_UN',
    'signal.h': 'signal raise kill SIGTERM SIGINT SIGHUP SIGKILL SIGSEGV '
                'SIGILL SIGSTOP SIG_DFL',
    'sys/prctl.h': 'prctl PR_SET_PDEATHSIG PR_SET_NAME',
    'pthread.h': 'pthread_create pthread_join pthread_atfork pthread_t',
}


class Unit:
    """A top-level unit of a C file: its lines, the names it defines and
    uses, and whether it is a root (tests, includes, assertions: no name
    of its own)."""

    def __init__(self, lines, code):
        self.lines = lines
        self.defs = set()
        for m in re.finditer(r'^\s*#\s*define\s+(\w+)', code, re.M):
            self.defs.add(m.group(1))
        for m in re.finditer(r'^(?:struct|enum|union)\s+(\w+)\s*\{', code, re.M):
            self.defs.add(m.group(1))
        # a function: the name before its parameters, attributes aside
        m = re.match(r'^\s*((?:static|inline|const|unsigned|struct|[a-z_]\w*'
                     r'|__\w+\((?:[^()]|\([^()]*\))*\)|[\s\*])*?)\b(\w+)\s*'
                     r'\([^{;]*\)\s*\{', code)
        if m and not m.group(2).isupper() and not m.group(2).startswith('__'):
            self.defs.add(m.group(2))
        for m in re.finditer(r'^static\s[^(){};=]*?\b(\w+)\s*(?:\[[^\]]*\])?'
                             r'\s*[=;,]', code, re.M):
            self.defs.add(m.group(1))
        for m in re.finditer(r'^static\s[^(){};=]*?(?:\[[^\]]*\])?\s*,'
                             r'([^;]*);', code, re.M):
            self.defs.update(re.findall(r'\b(\w+)\s*(?:\[[^\]]*\])?\s*(?:,|$)',
                                        m.group(1)))
        for m in re.finditer(r'^(?:static\s+)?(?:const\s+)?enum\b[^{;]*\{([^}]*)\}',
                             code, re.M):
            for item in m.group(1).split(','):
                w = IDENT.search(item)
                if w:
                    self.defs.add(w.group(0))
        self.uses = set(IDENT.findall(re.sub(r'^#\s*include.*$', '', code,
                                             flags=re.M))) - self.defs
        # roots: the file's head, tests and other top-level statements
        self.root = not self.defs or bool(
            re.search(r'^#include|^#ifndef|^_*[A-Z][A-Z0-9_]*\(|^static_assert',
                      code, re.M))
        self.includes = re.findall(r'^#include\s+[<"]([^>"]+)[>"]',
                                   '\n'.join(lines), re.M)


def c_units(text):
    """Split C text into Units: at a blank line outside braces, a
    preprocessor conditional (a header's guard aside) and a continued
    line."""
    lines = text.split('\n')
    code = blank_c(text).split('\n')
    guard = re.search(r'^#ifndef\s+(\w+)\n#define\s+\1\b', text, re.M)
    units, cur, ccur, depth, pp, cont = [], [], [], 0, 0, False
    for line, cl in zip(lines, code):
        d = cl.strip()
        is_guard = guard and (d.startswith('#ifndef ' + guard.group(1)) or
                              d.startswith('#define ' + guard.group(1)))
        if re.match(r'#\s*if', d) and not is_guard:
            pp += 1
        elif re.match(r'#\s*endif', d):
            pp = max(pp - 1, 0) if pp else pp
        if not line.strip() and depth == 0 and pp == 0 and not cont:
            if cur:
                units.append(Unit(cur, '\n'.join(ccur)))
            cur, ccur = [], []
            continue
        cur.append(line)
        ccur.append(cl)
        depth += cl.count('{') - cl.count('}')
        cont = line.endswith('\\')
    if cur:
        units.append(Unit(cur, '\n'.join(ccur)))
    return units


def reach(units, roots, extra_uses=(), held=frozenset()):
    """The indexes of units reached from roots (and extra_uses), never
    through a unit that defines a held name."""
    keep = set(roots)
    uses = set(extra_uses)
    for i in keep:
        uses |= units[i].uses
    changed = True
    while changed:
        changed = False
        for i, u in enumerate(units):
            if i not in keep and u.defs & uses and not u.defs & held:
                keep.add(i)
                uses |= u.uses
                changed = True
    return keep, uses


def render(units, keep, uses, tail=None):
    out = []
    for i, u in enumerate(units):
        if i not in keep:
            continue
        lines = []
        for line in u.lines:
            m = re.match(r'^#include\s+<([^>]+)>', line)
            if m and m.group(1) in INCLUDE_USES and \
                    not set(INCLUDE_USES[m.group(1)].split()) & uses:
                continue
            lines.append(line)
        out.append('\n'.join(lines))
    if tail:
        out.append(tail)
    return '\n\n'.join(out).rstrip('\n') + '\n'


def suite_versions(ours, progs):
    """{patch index: {file: text}} of the C sources and local headers, per
    patch of PATCHES, for the programs and definitions added so far."""
    placed = [p for _, ps, _ in PATCHES for p in ps]
    missing = [p for p in progs if p not in placed]
    if missing:
        die('programs in no patch of PATCHES: %s' % ' '.join(missing))
    later = {}  # file -> {name: patch index}
    for k, (_, _, adds) in enumerate(PATCHES):
        for f, names in adds.items():
            for name in names:
                later.setdefault(f, {})[name] = k
    units = {f: c_units(t) for f, t in ours.items() if f.endswith(('.c', '.h'))}
    versions = []
    for k in range(len(PATCHES)):
        have = [p for _, ps, _ in PATCHES[:k + 1] for p in ps if p in progs]
        files, uses = {}, set()
        for p in have:
            f = p + '.c'
            us = units[f]
            held = {n for n, at in later.get(f, {}).items() if at > k}
            roots = [i for i, u in enumerate(us) if u.root or
                     ('main' in u.defs and 'main' not in held)]
            keep, pu = reach(us, roots, held=held)
            tail = None
            if 'main' in held:
                tail = 'TEST_HARNESS_MAIN'
            files[f] = (us, keep, pu, tail)
            uses |= pu
        # local headers, reached from the programs
        for f, us in units.items():
            if not f.endswith('.h') or not any(
                    f in u.includes for p in have for u in units[p + '.c']):
                continue
            roots = [i for i, u in enumerate(us) if u.root]
            keep, hu = reach(us, roots, uses)
            files[f] = (us, keep, hu, None)
        versions.append({f: render(us, keep, u | uses, tail)
                         for f, (us, keep, u, tail) in files.items()})
    return versions


def merge_config(theirs, ours):
    """Their config, then ours not yet there, each with the comment lines
    above it in ours."""
    base = theirs.rstrip('\n').split('\n') if theirs else []
    have = {l.split('=')[0].strip() for l in base if '=' in l}
    notes = []
    for l in ours.splitlines():
        if l.startswith('#'):
            notes.append(l)
            continue
        if '=' in l and l.split('=')[0].strip() not in have:
            base += notes + [l]
            have.add(l.split('=')[0].strip())
        notes = [] if '=' in l or not l.strip() else notes
    return '\n'.join(base) + '\n'


def identity():
    """The author: whoever runs this, as git knows them."""
    p = subprocess.run(['git', 'var', 'GIT_AUTHOR_IDENT'],
                       capture_output=True, text=True)
    m = re.match(r'^(.*?) <([^>]*)>', p.stdout.strip())
    if p.returncode or not m or not m.group(1) or not m.group(2):
        die('no author identity: set git config user.name and user.email')
    return m.group(1), m.group(2)


def read_fix(path):
    """Subject, message body without sign-offs, and diff of a
    git format-patch file."""
    text = open(path).read()
    head, _, rest = text.partition('\n\n')
    m = re.search(r'^Subject: (.*(?:\n[ \t].*)*)', head, re.M)
    if not m:
        die('%s: no Subject' % path)
    subj = re.sub(r'^\[PATCH[^\]]*\]\s*', '', ' '.join(m.group(1).split()))
    body, _, diff = rest.partition('\n---\n')
    at = diff.find('diff --git ')
    if at < 0:
        die('%s: no diff' % path)
    body = '\n'.join(l for l in body.strip('\n').split('\n')
                     if not re.match(r'^(Signed-off-by|Cc):', l)).strip('\n')
    return subj, body, diff[at:]


def recipients(tree, mpath, patches):
    """(To, Cc) of patches from get_maintainer.pl: maintainers To, the
    rest Cc, keyword matches left out."""
    gm = subprocess.run(['perl', 'scripts/get_maintainer.pl',
                         '--no-git-fallback', '--no-keywords', '--mpath',
                         mpath] + patches, cwd=tree, capture_output=True,
                        text=True)
    if gm.returncode:
        die('get_maintainer.pl failed: %s' % gm.stderr.strip())
    to, cc = [], []
    for line in gm.stdout.splitlines():
        m = re.match(r'^\s*(.*?<[^>]+>|[^\s<>()]+@[^\s<>()]+)', line)
        if not m:
            continue
        addr = m.group(1)
        (to if '(maintainer:' in line else cc).append(addr)
    return to, cc


def add_headers(path, to, cc):
    """To: and Cc: header lines in a patch file, before Subject:."""
    text = open(path).read()
    head, sep, rest = text.partition('\n\n')
    extra = ''
    if to:
        extra += 'To: ' + ',\n    '.join(to) + '\n'
    if cc:
        extra += 'Cc: ' + ',\n    '.join(cc) + '\n'
    head = head.replace('\nSubject: ', '\n' + extra + 'Subject: ', 1)
    open(path, 'w').write(head + sep + rest)


PLACEHOLDER = re.compile(r'@[A-Z]+@')


def main(argv):
    args = argv[1:]
    fixes = None
    if args[:1] == ['--fixes']:
        if len(args) < 2:
            die('--fixes needs a directory')
        fixes, args = args[1], args[2:]
    if len(args) not in (4, 5):
        die('usage: series.py [--fixes DIR] TREE SUITE_DIR MSG_DIR OUT_DIR [BASE]')
    tree, suite, msgs, out = (os.path.abspath(a) for a in args[:4])
    base = args[4] if len(args) == 5 else 'HEAD'
    if not os.path.isdir(os.path.join(tree, '.git')):
        die('%s is not a git tree (git init it, or use the cached tree)' % tree)
    if not os.path.isfile(os.path.join(tree, 'tools/testing/selftests/lib.mk')):
        die('%s is not a kernel tree' % tree)
    base = git(tree, 'rev-parse', '--verify', base + '^{commit}').decode().strip()
    name, email = identity()
    ours = {}
    ignored = set()
    gi = os.path.join(suite, '.gitignore')
    if os.path.exists(gi):
        ignored = {l.strip().lstrip('/') for l in open(gi)
                   if l.strip() and not l.startswith('#')}
    for fname in sorted(os.listdir(suite)):
        p = os.path.join(suite, fname)
        if not os.path.isfile(p) or fname in ignored or fname.endswith('.o') \
                or fname.startswith('.') and fname != '.gitignore':
            continue
        ours[fname] = open(p).read()
    if 'Makefile' not in ours:
        die('%s has no Makefile' % suite)
    progs = programs(ours['Makefile'])
    if not progs:
        die('no TEST_GEN_PROGS in %s/Makefile' % suite)
    versions = suite_versions(ours, progs)
    ncases = len(re.findall(r'^FIXTURE_VARIANT_ADD\(page,', ours.get('page_cases.h', ''),
                            re.M))

    # Before KHDR_INCLUDES (5.18) each test named the tree's installed uapi
    # headers itself, as seccomp's Makefile does: the same here.
    libmk = show(tree, base, 'tools/testing/selftests/lib.mk') or ''
    if 'KHDR_INCLUDES' not in libmk:
        ours['Makefile'] = ours['Makefile'].replace(
            '$(KHDR_INCLUDES)', '-isystem ../../../../usr/include/')
    their = {n: show(tree, base, '%s/%s' % (SELFTEST, n)) for n in MERGED}
    their_progs = programs(their['Makefile']) if their['Makefile'] else []
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

    def commit(subj, body):
        text = '%s\n\n%s\n\nSigned-off-by: %s <%s>\n' % (subj, body, name, email)
        left = PLACEHOLDER.findall(text)
        if left:
            die('%s: placeholder left: %s' % (subj, ' '.join(sorted(set(left)))))
        tree_sha = git(tree, 'write-tree', env=env).decode().strip()
        return git(tree, 'commit-tree', tree_sha, '-p', head,
                   env=env, stdin=text.encode()).decode().strip()

    head = base
    nfixes = 0
    # a fix may come in versions for other trees (DIR/mainline/NAME):
    # the first of DIR/NAME, DIR/*/NAME that applies is used
    fixvers = {}
    for d in [fixes] + sorted(os.path.join(fixes, x) for x in os.listdir(fixes)
                              if os.path.isdir(os.path.join(fixes, x))) if fixes else []:
        for f in os.listdir(d):
            if f.endswith('.patch'):
                fixvers.setdefault(f, []).append(os.path.join(d, f))
    for f in sorted(fixvers):
        for path in fixvers[f]:
            subj, body, diff = read_fix(path)
            p = subprocess.run(['git', '-C', tree, 'apply', '--cached', '--check'],
                               input=diff.encode(), capture_output=True,
                               env=dict(os.environ, **env))
            if not p.returncode:
                break
        else:
            sys.stderr.write('series.py: %s does not apply to this tree, left out\n' % f)
            continue
        git(tree, 'apply', '--cached', env=env, stdin=diff.encode())
        head = commit(subj, body)
        nfixes += 1

    msg_files = set(os.listdir(msgs))
    first = True
    for k, (msgf, adds_progs, _) in enumerate(PATCHES):
        if msgf not in msg_files:
            die('no commit message %s in %s' % (msgf, msgs))
        sel = [p for _, ps, _ in PATCHES[:k + 1] for p in ps if p in progs]
        if not sel:
            continue
        for fname, text in versions[k].items():
            put('%s/%s' % (SELFTEST, fname), text)
        put(SELFTEST + '/Makefile',
            merge_makefile(their['Makefile'], ours['Makefile'], sel))
        if '.gitignore' in ours:
            put(SELFTEST + '/.gitignore',
                merge_lines(their['.gitignore'], ours['.gitignore'],
                            lambda l: l.strip().lstrip('/') not in progs
                            or l.strip().lstrip('/') in sel))
        if 'config' in ours and first:
            put(SELFTEST + '/config', merge_config(their['config'], ours['config']))
        if 'settings' in ours and first:
            s = merge_settings(their['settings'], ours['settings'])
            if s != their['settings']:
                put(SELFTEST + '/settings', s)
        first = False
        text = open(os.path.join(msgs, msgf)).read()
        subj, _, body = text.partition('\n')
        body = fill(body.strip('\n'), {
            'PROGS': words([p for p in adds_progs if p in progs]),
            'CASES': str(ncases)})
        head = commit(subj.strip(), body)
    os.unlink(env['GIT_INDEX_FILE'])
    patches = git(tree, 'format-patch', '--cover-letter', '-o', out,
                  '%s..%s' % (base, head), env=env).decode().split()
    cover = [p for p in patches if os.path.basename(p).startswith('0000-')][0]
    mpath = os.path.join(out, '.MAINTAINERS')
    with open(mpath, 'w') as f:
        f.write(show(tree, base, 'MAINTAINERS') or '')
    all_to, all_cc = [], []
    for p in patches:
        if p == cover:
            continue
        to, cc = recipients(tree, mpath, [p])
        add_headers(p, to, cc)
        all_to += [a for a in to if a not in all_to]
        all_cc += [a for a in cc if a not in all_cc and a not in all_to]
    os.unlink(mpath)
    cmsg = open(os.path.join(msgs, '0-cover.msg')).read()
    subj, _, body = cmsg.partition('\n')
    # a paragraph marked [fix] is about the kernel fixes: kept with them
    body = '\n\n'.join(p[len('[fix] '):] if p.startswith('[fix] ') else p
                       for p in body.split('\n\n')
                       if nfixes or not p.startswith('[fix] '))
    rel = show(tree, base, 'Makefile') or ''
    kv = '.'.join(re.search(r'^%s = (\d+)' % k, rel, re.M).group(1)
                  for k in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL')) \
        if re.search(r'^SUBLEVEL = \d+', rel, re.M) else base[:12]
    body = fill(body.strip('\n'), {
        'ALLPROGS': words(progs),
        'UPSTREAMPROGS': ', '.join(their_progs) or 'none',
        'CASES': str(ncases),
        'TREE': 'Linux %s' % kv})
    left = PLACEHOLDER.findall(subj + body)
    if left:
        die('0-cover.msg: placeholder left: %s' % ' '.join(sorted(set(left))))
    c = open(cover).read()
    c = c.replace('*** SUBJECT HERE ***', subj.strip())
    c = c.replace('*** BLURB HERE ***', body)
    open(cover, 'w').write(c)
    add_headers(cover, all_to, [a for a in all_cc if a not in all_to])
    print('\n'.join(patches))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
