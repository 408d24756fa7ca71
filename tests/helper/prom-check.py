#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A strict reader of the Prometheus text exposition format 0.0.4, as
node_exporter's textfile collector and a scrape read it: prom-check.py
FILE checks it and prints its samples as "name{labels} value" lines
(labels sorted, values unescaped as JSON strings); with errors, prints
each as "FILE:LINE: what" on stderr and exits 1.

Checked: names and label names; label values quoted with only the
escapes \\\\, \\" and \\n; values that parse as floats; no timestamps (the
textfile collector refuses them); one HELP and one TYPE per family, the
TYPE before its samples, each family's samples together; no sample
twice; counters' names end in _total; a histogram's buckets per label
set ascend in le, are cumulative, end at +Inf equal to _count, with a
_sum; the text ends with a newline."""
import json
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class Bad(Exception):
    pass


def labels_of(text, i):
    """The labels from text[i] (after '{') to its '}': (dict, index after)."""
    labels = {}
    while True:
        if text[i] == "}":
            return labels, i + 1
        m = LABEL.match(text, i)
        if not m:
            raise Bad("a label name expected at %r" % text[i:i + 20])
        name, i = m.group(0), m.end()
        if text[i:i + 2] != '="':
            raise Bad('=" expected after label %s' % name)
        i += 2
        value = []
        while True:
            if i >= len(text):
                raise Bad("label %s: unterminated value" % name)
            c = text[i]
            if c == "\\":
                e = text[i + 1:i + 2]
                if e not in ("\\", '"', "n"):
                    raise Bad("label %s: bad escape \\%s" % (name, e))
                value.append("\n" if e == "n" else e)
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                value.append(c)
                i += 1
        if name in labels:
            raise Bad("label %s twice" % name)
        labels[name] = "".join(value)
        if text[i] == ",":
            i += 1
        elif text[i] != "}":
            raise Bad("',' or '}' expected after label %s" % name)


def value_of(v):
    if v in ("+Inf", "-Inf", "NaN"):
        return float(v.replace("Inf", "inf"))
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", v):
        raise Bad("not a number: %r" % v)
    return float(v)


def family_of(name, types):
    """The family a sample name belongs to (histogram suffixes)."""
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[:-len(suffix)]
        if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
            return base
    return name


def check(path):
    errors = []
    data = open(path, encoding="utf-8").read()
    if data and not data.endswith("\n"):
        errors.append("%s: no newline at the end" % path)
    helps, types, seen, done = set(), {}, set(), set()
    samples = []
    current = None
    for n, line in enumerate(data.split("\n")[:-1], 1):
        try:
            if line.startswith("#"):
                parts = line.split(" ", 3)
                if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                    name = parts[2]
                    if not NAME.fullmatch(name):
                        raise Bad("bad metric name %r" % name)
                    if parts[1] == "HELP":
                        if name in helps:
                            raise Bad("HELP %s twice" % name)
                        helps.add(name)
                    else:
                        if name in types:
                            raise Bad("TYPE %s twice" % name)
                        if len(parts) != 4 or parts[3] not in TYPES:
                            raise Bad("TYPE %s: bad type" % name)
                        if name in done or name == current:
                            raise Bad("TYPE %s after its samples" % name)
                        types[name] = parts[3]
                continue
            if not line.strip():
                raise Bad("an empty line")
            m = NAME.match(line)
            if not m:
                raise Bad("a metric name expected")
            name, i = m.group(0), m.end()
            labels = {}
            if line[i:i + 1] == "{":
                labels, i = labels_of(line, i + 1)
            if line[i:i + 1] != " ":
                raise Bad("one space expected before the value")
            rest = line[i + 1:].split(" ")
            if len(rest) != 1:
                raise Bad("a timestamp or trailing text: %r" % line[i + 1:])
            v = value_of(rest[0])
            fam = family_of(name, types)
            if fam not in types:
                raise Bad("%s: a sample before its TYPE" % name)
            if fam != current:
                if fam in done:
                    raise Bad("%s: its family's samples are not together" % name)
                if current:
                    done.add(current)
                current = fam
            if types[fam] == "counter" and not name.endswith("_total"):
                raise Bad("counter %s: name without _total" % name)
            key = (name, tuple(sorted(labels.items())))
            if key in seen:
                raise Bad("%s%s twice" % (name, labels))
            seen.add(key)
            samples.append((name, labels, v))
        except (Bad, IndexError) as e:
            errors.append("%s:%d: %s" % (path, n, e))
    errors += histograms(path, types, samples)
    return errors, samples


def histograms(path, types, samples):
    errors = []
    for fam in (f for f, t in types.items() if t == "histogram"):
        sets = {}
        for name, labels, v in samples:
            if family_of(name, types) != fam:
                continue
            rest = {k: x for k, x in labels.items() if k != "le"}
            s = sets.setdefault(json.dumps(rest, sort_keys=True), {"buckets": []})
            if name == fam + "_bucket":
                if "le" not in labels:
                    errors.append("%s: %s: a bucket without le" % (path, fam))
                    continue
                s["buckets"].append((value_of(labels["le"]), v))
            else:
                s[name[len(fam) + 1:]] = v
        for key, s in sets.items():
            les = [le for le, _ in s["buckets"]]
            counts = [c for _, c in s["buckets"]]
            what = "%s: %s%s" % (path, fam, key)
            if les != sorted(les) or len(set(les)) != len(les):
                errors.append("%s: le not ascending" % what)
            if counts != sorted(counts):
                errors.append("%s: buckets not cumulative" % what)
            if not les or not math.isinf(les[-1]):
                errors.append("%s: no +Inf bucket" % what)
            elif s.get("count") != counts[-1]:
                errors.append("%s: _count %s is not the +Inf bucket %s" % (what, s.get("count"), counts[-1]))
            if "sum" not in s:
                errors.append("%s: no _sum" % what)
    return errors


def main():
    errors, samples = check(sys.argv[1])
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    for name, labels, v in samples:
        inner = ",".join("%s=%s" % (k, json.dumps(x)) for k, x in sorted(labels.items()))
        whole = math.isfinite(v) and v == int(v)
        print("%s%s %s" % (name, "{%s}" % inner if inner else "", int(v) if whole else repr(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
