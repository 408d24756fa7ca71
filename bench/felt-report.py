#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The report of bench/felt.sh (issue 29): a markdown section on stdout
from the files felt.sh leaves in its scratch directory (--work):

  probe      "START_US DURATION_US" a start of /bin/true (felt probe)
  blocks     ROW KIND T0_US T1_US DAEMON_CPU_MS: a block of storms
  storms     ROW KIND CGROUP "START_US EMPTY_US CAUGHT PEAK REFUSED"
  workloads  ROW NAME CGROUP "exit|signal N MS" PEAK FORKS DAEMON_CPU_MS T0_US
  notes      ROW TEXT

and the daemon's event log (--events, one JSON object a line). Each
storm's detection is the "detected_at" of the first event whose watched cgroup
is the storm's. Percentiles are nearest rank. --dat FILE: every storm,
workload and probe start over 100 ms, one a line, for the record.
"""
import argparse
import datetime
import json
import math
import os

SLOW_US = 100000


def rank(values, q):
    v = sorted(values)
    return v[max(0, math.ceil(len(v) * q) - 1)]


def fmt(x, digits=0):
    if x is None:
        return "–"
    return f"{x:,.{digits}f}"


def spread(values, digits=0):
    """median / p90 / worst, or a dash"""
    if not values:
        return "–"
    return " / ".join(fmt(rank(values, q), digits) for q in (0.5, 0.9, 1.0))


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def action_of(e):
    """the trigger's values and what the action did, for the record:
    "error backend signal_ms empty_ms {trigger}" """
    trig = json.dumps(e.get("trigger"), separators=(",", ":"))
    try:
        t = e["report"]["targets"][0]
        did = f"{e.get('error', '?')} {t.get('backend', '?')} {t.get('signal_ms', '?')} {t.get('empty_ms', '?')}"
    except (KeyError, IndexError, TypeError):
        did = f"{e.get('error', '?')} - - -"
    return f"{did} {trig}"


def event_us(e):
    """The event's detection in us since the epoch: "detected_at" (RFC 3339,
    event schema 2), or the older "time" (seconds)."""
    if "detected_at" in e:
        return int(round(datetime.datetime.fromisoformat(e["detected_at"]).timestamp() * 1e6))
    return int(round(e["time"] * 1e6))


def read_events(path):
    """watched cgroup -> (time_us, trigger type, action_of) of its first event"""
    first = {}
    if not os.path.exists(path):
        return first
    with open(path) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            t = event_us(e)
            trig = e.get("trigger", {}).get("type", "?")
            for cg in {e.get("watched"), e.get("cgroup")} - {None}:
                if cg not in first or t < first[cg][0]:
                    first[cg] = (t, trig, action_of(e))
    return first


def goal(blocks, probe, storms, loads, events):
    """Each daemon row against issue 29's goal, one line each."""
    print("### Against issue 29's goal\n")
    for row, kind, t0, t1, _ in blocks:
        if row in ("baseline", "none"):
            continue
        n = sum(1 for r in storms if r[0] == row and r[1] == kind)
        slow = sum(1 for s, d in probe if int(t0) <= s < int(t1) and d > SLOW_US)
        verdict = "met" if slow == 0 and n >= 200 else "**missed**" if slow else "not judged (fewer than 200)"
        print(f"- {row}, {kind}: {slow} start(s) over 100 ms in {n} storms "
              f"(goal: none in 200): {verdict}")
    for row in dict.fromkeys(r[0] for r in loads):
        mine = [r for r in loads if r[0] == row]
        killed = [r[1] for r in mine if r[2] in events or r[3].split()[:2] == ["signal", "9"]]
        print(f"- {row}: {len(killed)} of {len(mine)} fork-heavy workloads killed"
              f"{' (' + ', '.join(killed) + ')' if killed else ''} (goal: none): "
              f"{'**missed**' if killed else 'met'}")
        for r in mine:
            if r[1] == "make" and r[6] != "-":
                ms = int(r[3].split()[2])
                pct = 100 * int(r[6]) / max(ms, 1)
                print(f"- {row}: the daemon's CPU during make -j16: {pct:.2f}% of a CPU "
                      f"(goal: under 1%): {'met' if pct < 1 else '**missed**'}")
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--dat")
    ap.add_argument("--header", action="append", default=[])
    a = ap.parse_args()

    probe = []
    with open(os.path.join(a.work, "probe")) as f:
        for line in f:
            p = line.split()
            if len(p) == 2:
                probe.append((int(p[0]), int(p[1])))
    blocks = read_tsv(os.path.join(a.work, "blocks"))
    storms = read_tsv(os.path.join(a.work, "storms"))
    loads = read_tsv(os.path.join(a.work, "workloads"))
    notes = read_tsv(os.path.join(a.work, "notes"))
    events = read_events(a.events)
    dat = []

    print("## What a user feels through a fork storm (bench/felt.sh)\n")
    for h in a.header:
        print(f"- {h}")
    for row, text in notes:
        print(f"- {row}: {text}")
    print()

    print("### The probe: /bin/true every 100 ms from a sibling cgroup, ms\n")
    print("| row | bomb | storms | starts | median | p99 | worst | over 100 ms |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for row, kind, t0, t1, _ in blocks:
        t0, t1 = int(t0), int(t1)
        took = [d for s, d in probe if t0 <= s < t1]
        n = sum(1 for r in storms if r[0] == row and r[1] == kind)
        slow = [(s, d) for s, d in probe if t0 <= s < t1 and d > SLOW_US]
        dat += [f"probe\t{row}\t{kind}\t{s}\t{d}" for s, d in slow]
        if not took:
            print(f"| {row} | {kind} | {n} | 0 | – | – | – | – |")
            continue
        print(f"| {row} | {kind} | {n} | {len(took)} | {fmt(rank(took, .5) / 1e3, 1)} | "
              f"{fmt(rank(took, .99) / 1e3, 1)} | {fmt(max(took) / 1e3, 1)} | {len(slow)} |")
    print()

    print("### The storms, from the bomb's first fork, ms\n")
    print("Caught: emptied before the cut-off (else the harness wrote cgroup.kill). "
          "Detection: the daemon's event (the action's start). "
          "Size: pids.peak, median / worst; at pids.max: storms in which a fork was refused.\n")
    print("| row | bomb | storms | caught | by trigger | detection median / p90 / worst "
          "| to empty median / p90 / worst | size | at pids.max | daemon CPU s |")
    print("|---|---|--:|--:|---|---|---|---|--:|--:|")
    for row, kind, _, _, cpu in blocks:
        if row == "baseline":
            continue
        mine = [r for r in storms if r[0] == row and r[1] == kind]
        det, empty, size, trig = [], [], [], {}
        caught = full = 0
        for _, _, cg, line in mine:
            start, end, ok, peak, refused = line.split()
            start, end = int(start), int(end)
            ev = events.get(cg)
            d = (ev[0] - start) / 1e3 if ev else None
            if ev:
                det.append(d)
                trig[ev[1]] = trig.get(ev[1], 0) + 1
            empty.append((end - start) / 1e3)
            caught += ok == "1"
            if peak != "-":
                size.append(int(peak))
            full += refused not in ("-", "0")
            dat.append(f"storm\t{row}\t{kind}\t{start}\t{end}\t{ok}\t{peak}\t{refused}\t"
                       f"{f'{d:.1f}' if d is not None else '-'}\t{ev[1] if ev else '-'}\t"
                       f"{ev[2] if ev else '- - - - -'}")
        by = ", ".join(f"{t} {n}" for t, n in sorted(trig.items())) or "–"
        sz = f"{fmt(rank(size, .5))} / {fmt(max(size))}" if size else "–"
        cpu_s = "–" if cpu == "-" else fmt(int(cpu) / 1e3, 2)
        print(f"| {row} | {kind} | {len(mine)} | {caught} | {by} | {spread(det, 1)} | "
              f"{spread(empty, 1)} | {sz} | {full} | {cpu_s} |")
    print()

    if loads:
        print("### Fork-heavy work under the same rule, in a matched cgroup\n")
        print("Forks: those of the whole machine meanwhile (/proc/stat), other work included. "
              "Daemon CPU: utime+stime over the run (10 ms ticks).\n")
        print("| row | workload | outcome | run time s | processes at most | forks | forks/s "
              "| daemon CPU ms | % of a CPU |")
        print("|---|---|---|--:|--:|--:|--:|--:|--:|")
        for row, name, cg, res, peak, forks, cpu, _ in loads:
            how, code, ms = res.split()
            killed = cg in events or (how == "signal" and code == "9")
            outcome = "**killed**" if killed else "not killed"
            if not killed and (how, code) != ("exit", "0"):
                outcome += f" ({how} {code})"
            secs = int(ms) / 1e3
            pct = "–" if cpu == "-" else fmt(100 * int(cpu) / max(int(ms), 1), 2)
            print(f"| {row} | {name} | {outcome} | {fmt(secs, 1)} | {peak} | {fmt(int(forks))} | "
                  f"{fmt(int(forks) / max(secs, 1e-3))} | {cpu} | {pct} |")
            dat.append(f"workload\t{row}\t{name}\t{res}\t{peak}\t{forks}\t{cpu}\t{'killed' if killed else 'not'}")
        print()

    goal(blocks, probe, storms, loads, events)

    if a.dat:
        with open(a.dat, "w") as f:
            f.write("# storm ROW KIND START_US EMPTY_US CAUGHT PEAK REFUSED DETECTION_MS TRIGGER "
                    "ERROR BACKEND SIGNAL_MS EMPTY_MS TRIGGER_JSON (from the event)\n"
                    "# workload ROW NAME HOW CODE MS PEAK FORKS DAEMON_CPU_MS OUTCOME\n"
                    "# probe ROW KIND START_US DURATION_US (the starts over 100 ms)\n")
            f.write("\n".join(dat) + "\n")


if __name__ == "__main__":
    main()
