#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the outputs of one htmm test run into per-test lines and a total.

Inputs:
  --console FILE   the guest's kernel console (KUnit KTAP, kernel reports)
  --results FILE   the guest's second serial port (kselftest TAP, framed by
                   "# htmm-suite: NAME" / "# htmm-exit: NAME RC" markers)
  --host FILE      a TAP file of a host-side suite (may repeat), named by
                   its file name without extension
  --expect NAMES   comma-separated guest suites that must have run
  --kunit NAMES    comma-separated KUnit suites that must have run
  --qemu-rc N      exit code of QEMU (124: killed at the deadline)
  --extra-boot NAME CONSOLE RESULTS EXPECT RC
                   one more boot of the guest (may repeat): the same checks
                   for its console, results, expected suites and QEMU exit
                   code; its lines are named "NAME/suite" (no KUnit)

Prints "PASS|FAIL|SKIP suite: test" lines, then "#" lines that say why
each failure failed (its test's own lines, or the last lines of a guest
that did not finish), and ends with one line "N passed, N failed,
N skipped".  Exits 1 if anything failed.
"""
import argparse
import os
import re
import sys

TS = re.compile(r'^\[\s*\d+\.\d+\] ?')
TAP = re.compile(r'^(not ok|ok)\s+(\d+)\s*-?\s*(.*?)\s*$')
PLAN = re.compile(r'^1\.\.(\d+)')
# Kernel reports that fail a run whatever the tests said.
KERNEL_BAD = re.compile(
    r'(WARNING:|BUG:|Oops|Kernel panic|general protection fault|'
    r'KASAN:|UBSAN:|INFO: possible|INFO: task .* blocked|'
    r'possible circular locking|possible recursive locking|'
    r'inconsistent lock state|suspicious RCU usage|'
    r'rcu: INFO|soft lockup|hard LOCKUP|DEBUG_LOCKS_WARN_ON|'
    r'sleeping function called from invalid context|'
    r'kernel BUG at|list_add corruption|list_del corruption)')


# A failing kselftest's own lines ("# file.c:123:test:what"): the source
# path is cut to its line number.
DIAG = re.compile(r'^# (?:\S*/)?[\w.-]+\.c:(\d+):[\w.]+:')
DETAIL_LINES = 12       # per failure
DETAIL_TOTAL = 120      # in all


class Results:
    """The counts, and the lines that say why tests failed.

    The details are printed together before the total, so that the end of
    a long run's output (what CI shows) says why as well as what failed.
    """

    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.details = []

    def detail(self, what, lines):
        lines = [l for l in lines if l.strip()][-DETAIL_LINES:]
        if lines:
            self.details.append((what, lines))

    def print_details(self):
        left = DETAIL_TOTAL
        if self.details:
            print('# why they failed (the last lines of each):')
        for what, lines in self.details:
            if left <= 0:
                print('# ... (more in the logs)')
                break
            print(f'# -- {what}')
            for l in lines[:left]:
                print('#   ' + DIAG.sub(r'# L\1: ', l)[:200])
            left -= len(lines) + 1

    def add(self, status, suite, name, why=''):
        line = f'{status} {suite}: {name}'
        if why:
            line += f' ({why})'
        print(line)
        if status == 'PASS':
            self.passed += 1
        elif status == 'SKIP':
            self.skipped += 1
        else:
            self.failed += 1


def tap_status(kind, rest):
    """Return (status, name) for one TAP result line."""
    name, _, directive = rest.partition('#')
    directive = directive.strip()
    name = name.strip() or rest.strip()
    if directive.upper().startswith('SKIP'):
        return 'SKIP', name
    return ('PASS' if kind == 'ok' else 'FAIL'), name


def parse_tap_block(res, suite, lines, rc=None):
    """One flat TAP stream (a kselftest binary or a host suite)."""
    plan = None
    seen = 0
    since = []          # the lines since the last result
    for line in lines:
        m = PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = TAP.match(line)
        if m:
            status, name = tap_status(m.group(1), m.group(3))
            res.add(status, suite, name)
            if status == 'FAIL':
                res.detail(f'{suite}: {name}', since)
            since = []
            seen += 1
        else:
            since.append(line)
    if plan is None and seen == 0:
        res.add('FAIL', suite, 'no results', 'the suite printed no TAP')
    elif plan is not None and seen < plan:
        res.add('FAIL', suite, 'missing results',
                f'{seen} of {plan} planned tests reported')
        res.detail(f'{suite}: after its last result', since)
    if rc not in (None, 0) and res_fail_free(lines):
        res.add('FAIL', suite, 'exit status', f'exited with {rc}')


def res_fail_free(lines):
    return not any(l.startswith('not ok') for l in lines)


def parse_results(res, path, expect, prefix=''):
    try:
        with open(path, errors='replace') as f:
            lines = [l.rstrip('\r\n').replace('\r', '') for l in f]
    except FileNotFoundError:
        lines = []
    suites = {}
    order = []
    cur = None
    began = ended = False
    for line in lines:
        if line.startswith('# htmm-guest: begin'):
            began = True
        elif line.startswith('# htmm-guest: end'):
            ended = True
        elif line.startswith('# htmm-suite: '):
            cur = line.split(': ', 1)[1].strip()
            suites[cur] = {'lines': [], 'rc': None}
            order.append(cur)
        elif line.startswith('# htmm-exit: ') and cur:
            parts = line.split()
            suites[cur]['rc'] = int(parts[-1]) if parts[-1].isdigit() else -1
            cur = None
        elif cur:
            suites[cur]['lines'].append(line)
    for name in order:
        s = suites[name]
        parse_tap_block(res, prefix + name, s['lines'], s['rc'])
        if s['rc'] is None:
            res.add('FAIL', prefix + name, 'did not finish', 'no exit marker')
    for name in expect:
        if name not in suites:
            res.add('FAIL', prefix + name, 'did not run')
    if not began:
        res.add('FAIL', prefix + 'guest', 'test run started')
    elif not ended:
        res.add('FAIL', prefix + 'guest', 'test run finished')
        res.detail(f'{prefix}guest: the end of {os.path.basename(path)}',
                   lines)


def parse_qemu_rc(res, rc, prefix=''):
    if rc == 124:
        res.add('FAIL', prefix + 'guest', 'deadline', 'the guest was killed at the deadline (hang)')
    elif rc not in (None, 0):
        res.add('FAIL', prefix + 'guest', 'qemu exit status', f'qemu exited with {rc}')


def parse_console(res, path, expect_kunit, prefix=''):
    try:
        with open(path, errors='replace') as f:
            lines = [TS.sub('', l.rstrip('\r\n')) for l in f]
    except FileNotFoundError:
        res.add('FAIL', prefix + 'kernel', 'console log', f'{path} missing')
        return
    suite = None
    seen_suites = set()
    for line in lines:
        m = re.match(r'^\s{4}# Subtest: (\S+)', line)
        if m:
            suite = m.group(1)
            seen_suites.add(suite)
            continue
        m = re.match(r'^ {4}(not ok|ok) \d+ (.*)$', line)
        if m and suite:
            status, name = tap_status(m.group(1), m.group(2))
            res.add(status, f'{prefix}kunit.{suite}', name)
            continue
        m = re.match(r'^(not ok|ok) \d+ (\S+)', line)
        if m:
            suite = None
    for name in expect_kunit:
        if name not in seen_suites:
            res.add('FAIL', f'{prefix}kunit.{name}', 'did not run')
    bad = [l for l in lines if KERNEL_BAD.search(l)]
    for l in bad[:20]:
        res.add('FAIL', prefix + 'kernel', 'report in console', l.strip()[:160])
    if bad:
        print(f'# {len(bad)} kernel report line(s); see {path}')
    else:
        res.add('PASS', prefix + 'kernel', 'no warning, BUG, lockdep or KASAN report')
    if not any('reboot: Power down' in l for l in lines):
        res.add('FAIL', prefix + 'kernel', 'clean power-off',
                'the guest did not power off (panic or hang)')
        res.detail(f'{prefix}kernel: the end of {os.path.basename(path)}',
                   lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--console')
    ap.add_argument('--results')
    ap.add_argument('--host', action='append', default=[])
    ap.add_argument('--expect', default='')
    ap.add_argument('--kunit', default='')
    ap.add_argument('--qemu-rc', type=int)
    ap.add_argument('--extra-boot', nargs=5, action='append', default=[],
                    metavar=('NAME', 'CONSOLE', 'RESULTS', 'EXPECT', 'RC'))
    a = ap.parse_args()
    res = Results()
    for h in a.host:
        name = os.path.splitext(os.path.basename(h))[0]
        try:
            with open(h, errors='replace') as f:
                lines = [l.rstrip('\n') for l in f]
        except FileNotFoundError:
            lines = []
        parse_tap_block(res, name, lines)
    if a.console:
        parse_console(res, a.console,
                      [s for s in a.kunit.split(',') if s])
    if a.results is not None:
        parse_results(res, a.results, [s for s in a.expect.split(',') if s])
    parse_qemu_rc(res, a.qemu_rc)
    for name, console, results, expect, rc in a.extra_boot:
        prefix = name + '/'
        parse_console(res, console, [], prefix)
        parse_results(res, results, [s for s in expect.split(',') if s],
                      prefix)
        parse_qemu_rc(res, int(rc) if rc.lstrip('-').isdigit() else -1,
                      prefix)
    res.print_details()
    print(f'{res.passed} passed, {res.failed} failed, {res.skipped} skipped')
    return 1 if res.failed else 0


if __name__ == '__main__':
    sys.exit(main())
