#!/usr/bin/env python3
"""Prints one table for a group trial from the records fleet.yml fetched:
every member's blast JSON (steps[].group) and drop's. Each step's row has
the group's sending (each member's, and in all), what drop received, the
loss and drop's receiver-side verdict."""
import json
import pathlib
import sys


def main(folder: str) -> int:
    records = []
    for p in sorted(pathlib.Path(folder).glob("*/*.json")):
        v = json.loads(p.read_text())
        if v.get("tool") == "blast":
            records.append(v)
    if not records:
        print(f"no blast record under {folder}", file=sys.stderr)
        return 1
    # A member that failed early may hold no group step: read one that does.
    first = next((r for r in records if any(s.get("group") for s in r["steps"])), records[0])
    steps = first["steps"]
    group = next((s["group"] for s in steps if s.get("group")), None)
    if group is None:
        print("the records hold no group step (did every member fail?)", file=sys.stderr)
        return 1
    n = group["senders"]
    print(f"group {group['name']}: {n} senders -> drop; receiver-side figures (drop's counts and verdict)")
    head = ["step", "queues", "size"] + [f"m{i} Mpps" for i in range(n)] + ["sent Mpps", "recv Mpps", "loss %", "limit"]
    print("  ".join(f"{h:>10}" for h in head))
    for s in steps:
        g = s.get("group")
        if not g:
            print(f"{s['step'] + 1:>10}  {s['queues']:>10}  {s['size']:>10}  failed: {s.get('error')}")
            continue
        secs = s["sent"]["packets"] / s["sent"]["mpps"] / 1e6 if s["sent"]["mpps"] else 0.0
        each = [m["sent_packets"] / secs / 1e6 if secs else 0.0 for m in sorted(g["members"], key=lambda m: m["member"])]
        row = [s["step"] + 1, s["queues"], s["size"]] + [f"{x:.3f}" for x in each]
        row += [f"{s['sent']['mpps']:.3f}", f"{(s.get('received') or {}).get('mpps', 0):.3f}", f"{s.get('loss_pct') or 0:.3f}", s.get("limit", "")]
        print("  ".join(f"{str(x):>10}" for x in row))
        for m in sorted(g["members"], key=lambda m: m["member"]):
            if "received" in m:
                print(f"{'':>10}  member {m['member']} ({m['client']}): sent {m['sent_packets']}, drop received {m['received']}, lost {m['lost']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
