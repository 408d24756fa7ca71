#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The observer of bench/oomd-peer.sh: one trial's clock. Run as root, it
# samples the victim cgroup's cgroup.events and its parent's v2
# memory.pressure every 10 ms (SCHED_FIFO 10, as the daemon benchmark's
# observer) from before the workload starts until the victim is empty or the
# deadline passes, and writes one JSON object with the moments
# (CLOCK_REALTIME, microseconds):
#
#   populated   first sample with "populated 1"
#   stall       first sample whose "full" total is above the first populated
#               sample's: the workload's first stall (to within 10 ms)
#   cond        first sample at which the "full" stall of the trailing
#               WINDOW reached LIMIT percent of it (the condition of the
#               kernel trigger "full LIMIT% WINDOW", judged from samples)
#   avg10       first sample whose "full avg10" reached LIMIT (what oomd's
#               pressure_above compares)
#   empty       first sample with "populated 0" after populated
#   kevent      the first event of a PSI trigger "full LIMIT% of WINDOW"
#               that the observer arms on the victim's memory.pressure
#               itself (polled between samples: to within a millisecond),
#               the moment the kernel told cgkilld's trigger too (the
#               kernel checks all of a cgroup's triggers in one pass)
#
# and the full total at the end, the peak full avg10, the number of samples.
#
# The parent's pressure, not the victim's: it counts the same stalls (the
# parent holds only the victim and an idle sentinel), and reading a
# cgroup's pressure file delays that cgroup's unprivileged PSI triggers (the
# read folds the averages when they are due, and the kernel's averaging work,
# which alone checks those triggers, then finds nothing due and skips them:
# kernel/sched/psi.c, psi_show() and psi_avgs_work()). Read at 10 ms by a
# SCHED_FIFO reader, the victim's own file kept cgkilld's trigger from firing
# for 15 s and more.
#
#	oomd-peer.py CGROUP_DIR PRESSURE_DIR OUT READY_FILE DEADLINE_S [LIMIT_PCT WINDOW_S]
import json
import os
import select
import sys
import time

cg, pdir, out, ready = sys.argv[1:5]
deadline = float(sys.argv[5])
limit = float(sys.argv[6]) if len(sys.argv) > 6 else 20.0
window = float(sys.argv[7]) if len(sys.argv) > 7 else 2.0
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except OSError:
    pass


def now():
    return time.time_ns() // 1000


def full():
    with open(pdir + "/memory.pressure") as f:
        for line in f:
            if line.startswith("full"):
                kv = dict(x.split("=") for x in line.split()[1:])
                return float(kv["avg10"]), int(kv["total"])
    raise ValueError("no full line")


def populated():
    with open(cg + "/cgroup.events") as f:
        return "populated 1" in f.read()


fd = os.open(cg + "/memory.pressure", os.O_RDWR | os.O_NONBLOCK)
os.write(fd, b"full %d %d" % (int(limit / 100 * window * 1e6), int(window * 1e6)))
poller = select.poll()
poller.register(fd, select.POLLPRI)
res = {"kevent": None, "populated": None, "stall": None, "cond": None, "avg10": None, "empty": None,
       "full_total_us": None, "peak_avg10": 0.0, "samples": 0}
hist = []       # (t, total) of the last WINDOW seconds
base = None
open(ready, "w").close()
end = time.monotonic() + deadline
while time.monotonic() < end:
    t = now()
    try:
        pop = populated()
        a10, tot = full()
    except (OSError, ValueError):
        break
    res["samples"] += 1
    if pop and res["populated"] is None:
        res["populated"] = t
        base = tot
    if res["populated"] is not None:
        res["peak_avg10"] = max(res["peak_avg10"], a10)
        res["full_total_us"] = tot - base
        if res["stall"] is None and tot > base:
            res["stall"] = t
        hist.append((t, tot))
        while len(hist) > 1 and hist[1][0] <= t - window * 1e6:
            hist.pop(0)
        if res["cond"] is None and hist[0][0] <= t - window * 1e6 + 20000 and \
                tot - hist[0][1] >= limit / 100 * (t - hist[0][0]):
            res["cond"] = t
        if res["avg10"] is None and a10 >= limit:
            res["avg10"] = t
        if not pop:
            res["empty"] = t
            break
    # the sampling pause, cut short by the trigger's event
    if poller.poll(10) and res["kevent"] is None:
        res["kevent"] = now()
with open(out + ".tmp", "w") as f:
    json.dump(res, f)
os.rename(out + ".tmp", out)
