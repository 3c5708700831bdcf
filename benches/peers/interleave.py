#!/usr/bin/env python3
"""Whole-process wall time of several commands, run in turn.

Each round runs every command once, in a new random order, so a drift in the
machine's speed (this one's moves by 2x between runs, and by a quarter between
back-to-back hyperfine runs) weighs on every command alike; hyperfine runs one
command's runs, then the next's.

    interleave.py ROUNDS SPEC.json   prints {"name": median_ms, ...}

SPEC.json is a list of {"name": ..., "argv": [...], "stdin": path}. Each
process is started directly (posix_spawn, no shell), with standard output to
/dev/null; the first 5 rounds are a warm-up. A command that exits non-zero is
still timed (as hyperfine's --ignore-failure). The time of starting /bin/true
the same way is printed as "true", the cost every command shares.
"""
import json
import os
import random
import statistics
import sys
import time


def main():
    rounds = int(sys.argv[1])
    with open(sys.argv[2]) as f:
        spec = json.load(f)
    if os.path.exists("/bin/true"):
        spec.append({"name": "true", "argv": ["/bin/true"], "stdin": "/dev/null"})
    times = {c["name"]: [] for c in spec}
    for r in range(rounds + 5):
        order = spec[:]
        random.shuffle(order)
        for c in order:
            actions = [
                (os.POSIX_SPAWN_OPEN, 0, c["stdin"], os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
            ]
            t0 = time.perf_counter_ns()
            pid = os.posix_spawn(c["argv"][0], c["argv"], os.environ, file_actions=actions)
            os.waitpid(pid, 0)
            t1 = time.perf_counter_ns()
            if r >= 5:
                times[c["name"]].append((t1 - t0) / 1e6)
    print(json.dumps({n: statistics.median(t) for n, t in times.items()}))


if __name__ == "__main__":
    main()
