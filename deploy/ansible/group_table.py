#!/usr/bin/env python3
"""Prints one table for a group trial from the records fleet.yml fetched:
every member's blast JSON (steps[].group) and drop's. Each step's row has
the group's sending (each member's, and in all), what drop received, the
loss and drop's receiver-side verdict; under it each member's own row
(what drop counted of its streams, its own sender-side verdict) and drop's
view of the superposed arrivals (peak-to-mean, backlog, Q_burst)."""
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
            line = f"{'':>10}  member {m['member']} ({m['client']}): sent {m['sent_packets']}"
            if "received" in m:
                line += f", drop received {m['received']}, lost {m['lost']}"
            if "sender_limit" in m:
                line += f"; {m.get('cycles_per_packet', 0):.1f} cycles/frame, sender-side limit: {m['sender_limit']}"
            print(line)
        a = (s.get("receiver") or {}).get("arrivals")
        if a:
            print(f"{'':>10}  arrivals at drop: {arrivals(a)}")
    return 0


def arrivals(a: dict) -> str:
    """drop's arrival view of the superposed traffic, as blast prints it."""
    text = f"{a['full_polls']} full polls, backlog up to {a['max_backlog_frames']} frames"
    if "peak_to_mean" in a:
        text += (f"; per {a['interval_us']} us on a queue: peak {a['peak_per_interval']}, "
                 f"mean {a['mean_per_interval']:.1f}, peak-to-mean {a['peak_to_mean']:.2f}")
    q = a.get("q_burst")
    if q:
        text += (f"; Q_burst = ({q['lambda_peak_mpps']:.3f} - {q['mu_mpps']:.3f} Mpps) x {q['t_b_us']:.0f} us"
                 f" = {q['frames']:.0f} frames (queue {q['queue']})")
    return text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
