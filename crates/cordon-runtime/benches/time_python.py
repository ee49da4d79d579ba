"""Times a Python program's `run()` for the interpreter bench, round by round, in CPython or in
Monty (pydantic-monty).

Usage: `time_python.py FILE [--monty]`. The program in FILE defines `run()`. Prints its result;
then, for each budget in nanoseconds read from standard input (one round of the bench), runs
`run()` again and again for about that long (at least `ROUND_MIN_RUNS` times, from the
environment), each run timed with `time.perf_counter_ns`, and prints the median. In Monty the
program is fed to one session once, then `run()` for each run, timed from the host: each timed
run includes one round trip to Monty's worker process (tens of microseconds), which the
programs' milliseconds dwarf.
"""

import os
import statistics
import sys
import time


def rounds(run):
    min_runs = int(os.environ["ROUND_MIN_RUNS"])
    print(run(), flush=True)
    for line in sys.stdin:
        budget = int(line)
        times = []
        start = time.perf_counter_ns()
        while len(times) < min_runs or (time.perf_counter_ns() - start < budget and len(times) < 10000):
            t = time.perf_counter_ns()
            run()
            times.append(time.perf_counter_ns() - t)
        print(int(statistics.median(times)), flush=True)


with open(sys.argv[1], encoding="utf-8") as f:
    program = f.read()
if sys.argv[2:] == ["--monty"]:
    from pydantic_monty import Monty

    with Monty() as pool:
        with pool.checkout() as session:
            session.feed_run(program)
            rounds(lambda: session.feed_run("run()"))
else:
    namespace = {}
    exec(program, namespace)
    rounds(namespace["run"])
