#!/usr/bin/env python3
"""Markdown tables for docs/conformance.md from `weir pkt --json` output.

  weir pkt --all-ip-versions --json ../shared/packetdrill/gtests-tcp > runs.json
  python3 tests/pkt/conformance_tables.py runs.json ../shared/packetdrill/gtests-tcp

Prints the per-folder table and the failing / skipped scripts grouped by
reason (numbers in a reason become N so that like failures group).
"""
import collections
import json
import os
import re
import sys


def main():
    runs = json.load(open(sys.argv[1]))["runs"]
    root = os.path.normpath(sys.argv[2])
    per_folder = collections.OrderedDict()
    fails = collections.defaultdict(lambda: collections.defaultdict(list))
    skips = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in runs:
        rel = os.path.relpath(os.path.normpath(r["script"]), root)
        folder = os.path.dirname(rel) or "."
        c = per_folder.setdefault(folder, collections.Counter())
        c[r["outcome"]] += 1
        reason = " ".join(r.get("reason", "").split())  # one line, even for a traceback
        key = re.sub(r"\d+(\.\d+)?", "N", reason)
        if r["outcome"] == "FAIL":
            fails[key][rel].append((r["ip_version"], r.get("line"), r.get("script_line", ""), reason))
        elif r["outcome"] == "SKIP":
            skips[key][rel].append((r["ip_version"],))
    tot = collections.Counter()
    print("| folder | pass | fail | skip | pass rate |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for folder in sorted(per_folder):
        c = per_folder[folder]
        tot.update(c)
        n = sum(c.values())
        print(f"| {folder} | {c['PASS']} | {c['FAIL']} | {c['SKIP']} | {round(100 * c['PASS'] / n)}% |")
    n = sum(tot.values())
    print(f"| **all** | **{tot['PASS']}** | **{tot['FAIL']}** | **{tot['SKIP']}** | "
          f"**{round(100 * tot['PASS'] / n)}%** |")
    print(f"\nTotals: {tot['PASS']} passed, {tot['FAIL']} failed, {tot['SKIP']} skipped over {n} runs.")
    for title, groups, detail in (("Failing scripts, grouped by reason", fails, True),
                                  ("Skipped scripts, grouped by reason", skips, False)):
        print(f"\n### {title}\n")
        order = sorted(groups, key=lambda k: -sum(len(v) for v in groups[k].values()))
        for key in order:
            count = sum(len(v) for v in groups[key].values())
            print(f"- **{key}** ({count} runs)")
            for rel in sorted(groups[key]):
                vs = groups[key][rel]
                variants = ", ".join(v[0] for v in vs)
                if detail:
                    _, line, text, reason = vs[0]
                    text = text.replace("`", "'")
                    print(f"  - `{rel}` ({variants}) line {line}: `{text}` — {reason}")
                else:
                    print(f"  - `{rel}` ({variants})")


if __name__ == "__main__":
    main()
