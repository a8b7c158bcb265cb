# Exchange swapper for race.test.ts: like race-swapper.mjs, but flips each entry with
# renameat2(RENAME_EXCHANGE), which Node lacks, so `live` is never missing: a check that saw the real
# entry meets the symlink at the next step (and the other way round), the tightest race a client can meet.
#
#   python3 race-swapper.py <config.json>   (same config and output as race-swapper.mjs; realPark unused)
#   python3 race-swapper.py --probe <dir>    exit 0 when RENAME_EXCHANGE works in <dir>
import ctypes
import json
import os
import struct
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2
libc = ctypes.CDLL(None, use_errno=True)


def exchange(a, b):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), a)


if sys.argv[1] == '--probe':
    d = sys.argv[2]
    for name in ('x', 'y'):
        open(os.path.join(d, name), 'w').close()
    exchange(os.path.join(d, 'x'), os.path.join(d, 'y'))
    sys.exit(0)

with open(sys.argv[1]) as fh:
    config = json.load(fh)
base = int(config['clockBase'])
counts = {'swaps': 0, 'repairs': 0, 'errors': 0}
intervals = []
junk = 0


def now():
    return time.monotonic_ns() - base  # CLOCK_MONOTONIC, as Node's process.hrtime


def is_link(p):
    return os.path.islink(p)


def clear(pair, p):
    """Moves whatever sits at p out of the way (beside the pair's park), if anything does."""
    global junk
    try:
        os.rename(p, os.path.join(os.path.dirname(pair['realPark']), 'junk-%d-%d' % (os.getpid(), junk)))
        junk += 1
        counts['repairs'] += 1
    except FileNotFoundError:
        pass


def make_link(pair):
    clear(pair, pair['linkPark'])
    os.symlink(pair['linkTarget'], pair['linkPark'])
    counts['repairs'] += 1


def refill(pair, at):
    """The real entry at `at` (out of the tools' way) gets back what deletes and moves took from it."""
    if pair['kind'] == 'leaf':
        return
    for rel in pair.get('files') or []:
        f = os.path.join(at, rel)
        if not os.path.exists(f):
            os.makedirs(os.path.dirname(f), exist_ok=True)
            with open(f, 'w') as fh:
                fh.write('refilled by the swapper\nline two\n')


def make_real(pair):
    if pair['kind'] == 'leaf':
        with open(pair['live'], 'w') as fh:
            fh.write('recreated by the swapper\nline two\n')
    else:
        os.mkdir(pair['live'])
        refill(pair, pair['live'])
    counts['repairs'] += 1


def link_in(pair, i):
    # A tool may have deleted or moved the real entry, or replaced the parked symlink: repair first.
    if not os.path.lexists(pair['live']) or is_link(pair['live']):
        clear(pair, pair['live'])
        make_real(pair)
    if not is_link(pair['linkPark']):
        make_link(pair)
    exchange(pair['live'], pair['linkPark'])
    pair['from'] = now()
    refill(pair, pair['linkPark'])


def link_out(pair, i):
    try:
        exchange(pair['live'], pair['linkPark'])
    finally:
        intervals.append((i, pair['from'], now()))
    counts['swaps'] += 1


def settle(pair):
    if is_link(pair['live']) and not is_link(pair['linkPark']) and os.path.lexists(pair['linkPark']):
        exchange(pair['live'], pair['linkPark'])


pairs = config['pairs']
for p in pairs:
    if not is_link(p['linkPark']):
        make_link(p)
sys.stdout.write('ready\n')
sys.stdout.flush()
counts['repairs'] = 0
deadline = now() + config['durationMs'] * 1_000_000
while now() < deadline:
    failed = set()
    for step in (link_in, link_out):
        for i, p in enumerate(pairs):
            if i in failed:
                continue
            try:
                step(p, i)
            except OSError:
                counts['errors'] += 1
                failed.add(i)
    for i in failed:
        try:
            settle(pairs[i])
        except OSError:
            pass
for p in pairs:
    try:
        settle(p)
    except OSError:
        pass
with open(config['intervalsFile'], 'wb') as fh:
    for i, a, b in intervals:
        fh.write(struct.pack('<ddd', i, a, b))
sys.stdout.write(json.dumps(counts) + '\n')
