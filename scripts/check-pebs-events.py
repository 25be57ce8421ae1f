#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check htmm's PEBS event table against the kernel's own event lists.

mm/htmm/src_perf.c names, per CPU model (and stepping range), the raw
encoding (umask << 8 | event code) of the event of each sample slot, or 0
for a slot the model does not use.  This script reads, from the pristine
kernel tree imported by scripts/prepare-tree.sh ($BUILD/linux, tag
"pristine"), arch/x86/include/asm/intel-family.h for the model numbers,
tools/perf/pmu-events/arch/x86/mapfile.csv for the event list of each
model and stepping, and that list's JSON files, and checks for every model
htmm claims:

  - every stepping maps to exactly one event list;
  - a used slot's event exists there with that event code and umask, under
    the name the table's comment gives the slot, takes PEBS with a data
    linear address, and needs no load-latency threshold (MSR 0x3F6) or
    other extra MSR, counter mask, invert or edge setting (htmm programs
    the raw encoding alone);
  - an unused slot's event does not exist there.

Prints TAP.  Usage: BUILD=... scripts/check-pebs-events.py
"""
import json
import os
import re
import subprocess
import sys
import warnings

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get('BUILD', os.path.join(TOP, 'build'))
GIT_DIR = os.path.join(BUILD, 'linux', '.git')
SRC_PERF = os.path.join(TOP, 'mm', 'htmm', 'src_perf.c')
ARCH = 'tools/perf/pmu-events/arch/x86'
LDLAT_MSR = 0x3F6


class Tap:
    def __init__(self):
        self.lines = []
        self.n = 0
        self.failed = 0

    def check(self, ok, desc, diag=()):
        self.n += 1
        self.lines.append(f'{"ok" if ok else "not ok"} {self.n} - {desc}')
        self.lines.extend(f'# {d}' for d in diag)
        self.failed += not ok

    def bail(self, why):
        print('TAP version 13')
        print('1..1')
        print(f'not ok 1 - {why}')
        sys.exit(1)

    def done(self):
        print('TAP version 13')
        print(f'1..{self.n}')
        print('\n'.join(self.lines))
        sys.exit(1 if self.failed else 0)


def pristine(tap, path):
    """A file of the pristine tree, or bail out."""
    try:
        return subprocess.run(['git', f'--git-dir={GIT_DIR}', 'show',
                               f'pristine:{path}'], check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        tap.bail(f'reading {path} from the pristine tree in {GIT_DIR}: {e}')
        return ''


def pristine_ls(tap, path):
    try:
        out = subprocess.run(['git', f'--git-dir={GIT_DIR}', 'ls-tree',
                              '--name-only', f'pristine:{path}'], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        tap.bail(f'listing {path} in the pristine tree: {e}')
    return out.split()


def parse_table(tap):
    """The slot names, the slot events and the model table of src_perf.c."""
    with open(SRC_PERF) as f:
        src = f.read()
    m = re.search(r'enum htmm_pev \{([^}]*)\}', src)
    slots = [s.strip() for s in m.group(1).split(',')] if m else []
    slots = [s for s in slots if s and s != 'HTMM_NR_PEV']
    # " *   MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM   0x01d3  fast tier loads"
    names = re.findall(r'^ \*\s+([A-Z0-9_]+\.[A-Z0-9_]+)\s+(0x[0-9a-f]+)\s',
                       src, re.M)
    models = {}
    for var, name, events in re.findall(
            r'static const struct htmm_pebs_model (\w+) = \{\s*"([^"]*)",'
            r'\s*\{([^}]*)\}\s*\};', src):
        models[var] = (name, [int(e.strip(), 0) for e in events.split(',')])
    matches = []
    for vfm, steps, var in re.findall(
            r'X86_MATCH_VFM(?:_STEPPINGS)?\(\s*(INTEL_\w+)\s*,'
            r'\s*(?:X86_STEPPINGS\(([^)]*)\)\s*,)?\s*&(\w+)\s*\)', src):
        lo, hi = (int(x, 0) for x in steps.split(',')) if steps else (0, 15)
        matches.append((vfm, lo, hi, var))
    if len(slots) != 4 or len(names) != len(slots) or not models or not matches:
        tap.bail(f'cannot parse the event table of {SRC_PERF}')
    tap.check(all(len(ev) == len(slots) for _, ev in models.values()) and
              all(var in models for *_, var in matches),
              f'src_perf.c: {len(matches)} CPU matches, {len(models)} models, '
              f'{len(slots)} slots')
    return slots, names, models, matches


def model_number(tap, header, vfm):
    m = re.search(rf'#define {vfm}\s+IFM\((\d+),\s*(0x[0-9A-Fa-f]+)\)', header)
    if not m:
        tap.bail(f'{vfm} not in intel-family.h')
    return int(m.group(1)), int(m.group(2), 16)


def cpuid_match(pattern, ids):
    """Does a mapfile.csv CPUID pattern (a regex) match one of the ids?"""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        try:
            return any(re.fullmatch(pattern, i, re.I) for i in ids)
        except re.error:
            return False


def event_lists(mapfile, family, model, lo, hi):
    """{dir: [steppings]} of the core event lists for the steppings."""
    rows = [l.split(',') for l in mapfile.splitlines()[1:] if l.strip()]
    out = {}
    for step in range(lo, hi + 1):
        ids = (f'GenuineIntel-{family}-{model:X}-{step:X}',
               f'GenuineIntel-{family}-{model:X}')
        hits = [r[2] for r in rows if len(r) >= 4 and r[3] == 'core' and
                cpuid_match(r[0], ids)]
        for d in hits or ['(none)']:
            out.setdefault(d, []).append(step)
        if len(hits) > 1:
            out.setdefault('(several)', []).append(step)
    return out


def load_events(tap, d):
    events = []
    for f in pristine_ls(tap, f'{ARCH}/{d}'):
        if f.endswith('.json'):
            data = json.loads(pristine(tap, f'{ARCH}/{d}/{f}'))
            events.extend(e for e in data if isinstance(e, dict))
    return events


def num(e, key):
    try:
        return int(str(e.get(key, '0')).split(',')[0], 0)
    except ValueError:
        return -1


def check_slot(tap, what, slot, want, config, events):
    name = want[0]
    if not config:
        have = [e for e in events if e.get('EventName') == name]
        tap.check(not have, f'{what}: {slot} unused; the list has no {name}',
                  [f'{name} is there: event {have[0].get("EventCode")} umask '
                   f'{have[0].get("UMask")}'] if have else [])
        return
    code, umask = config & 0xff, config >> 8
    hits = [e for e in events if num(e, 'EventCode') == code and
            num(e, 'UMask') == umask and num(e, 'CounterMask') == 0 and
            num(e, 'Invert') == 0 and num(e, 'EdgeDetect') == 0]
    diag = []
    e = next((h for h in hits if h.get('EventName') == name), None)
    if config != int(want[1], 16):
        diag.append(f'the table comment gives {name} as {want[1]}')
    if not e:
        diag.append(f'no {name} with event {code:#x} umask {umask:#x}; '
                    f'there: {[h.get("EventName") for h in hits]}')
    else:
        if e.get('PEBS', '0') not in ('1', '2'):
            diag.append(f'PEBS {e.get("PEBS")}')
        if e.get('Data_LA') != '1':
            diag.append('no data linear address (Data_LA)')
        if num(e, 'MSRIndex') == LDLAT_MSR:
            diag.append(f'needs a load-latency threshold {e.get("MSRValue")}')
        elif e.get('MSRIndex', '0') not in ('0', '0x00', ''):
            diag.append(f'needs MSR {e.get("MSRIndex")}={e.get("MSRValue")}')
    tap.check(not diag, f'{what}: {slot} {config:#06x} is {name}, PEBS with '
              'a data address, no load-latency threshold', diag)


def main():
    tap = Tap()
    slots, names, models, matches = parse_table(tap)
    header = pristine(tap, 'arch/x86/include/asm/intel-family.h')
    mapfile = pristine(tap, f'{ARCH}/mapfile.csv')
    for vfm, lo, hi, var in matches:
        mname, configs = models[var]
        family, model = model_number(tap, header, vfm)
        lists = event_lists(mapfile, family, model, lo, hi)
        good = [d for d in lists if not d.startswith('(')]
        tap.check(len(good) >= 1 and '(none)' not in lists and
                  '(several)' not in lists,
                  f'{mname} ({vfm}, family {family} model {model:#x} '
                  f'steppings {lo}-{hi}): event lists {", ".join(good)}',
                  [f'{d}: steppings {s}' for d, s in lists.items()])
        for d in good:
            events = load_events(tap, d)
            for slot, want, config in zip(slots, names, configs):
                check_slot(tap, f'{mname} [{d}]', slot, want, config, events)
    tap.done()


if __name__ == '__main__':
    main()
