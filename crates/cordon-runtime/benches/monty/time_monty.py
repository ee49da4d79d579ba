"""Times a program in Monty (pydantic-monty) as the interpreter bench times it in CPython.

The program, in the file named by the first argument, defines `run()`. It is fed to one Monty
session once, and the result of `run()` printed; then, for each budget in nanoseconds read from
standard input (one round of the bench), `run()` is fed again and again for about that long,
timed from the host with `time.perf_counter_ns`, and the median printed. Each timed run includes
one round trip to Monty's worker process (tens of microseconds), which the programs'
milliseconds dwarf.
"""

import os
import statistics
import sys
import time

from pydantic_monty import Monty

MIN_RUNS = int(os.environ["ROUND_MIN_RUNS"])

with open(sys.argv[1], encoding="utf-8") as f:
    program = f.read()
with Monty() as pool:
    with pool.checkout() as session:
        session.feed_run(program)
        print(session.feed_run('run()'), flush=True)
        for line in sys.stdin:
            budget = int(line)
            times = []
            start = time.perf_counter_ns()
            while len(times) < MIN_RUNS or (time.perf_counter_ns() - start < budget and len(times) < 10000):
                t = time.perf_counter_ns()
                session.feed_run('run()')
                times.append(time.perf_counter_ns() - t)
            print(int(statistics.median(times)), flush=True)
