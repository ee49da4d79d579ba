"""Times a program in Monty (pydantic-monty) as the interpreter bench times it in CPython.

The program, read from standard input, defines `run()`. It is fed to one Monty session once;
then `run()` is fed again and again, timed from the host with `time.perf_counter_ns` after a
warm-up. Prints the result, then the median in nanoseconds. Each timed run includes one round
trip to Monty's worker process (tens of microseconds), which the programs' milliseconds dwarf.
"""

import statistics
import sys
import time

from pydantic_monty import Monty

program = sys.stdin.read()
with Monty() as pool:
    with pool.checkout() as session:
        session.feed_run(program)
        result = session.feed_run('run()')
        times = []
        start = time.perf_counter_ns()
        while len(times) < 11 or (time.perf_counter_ns() - start < 1_000_000_000 and len(times) < 10000):
            t = time.perf_counter_ns()
            session.feed_run('run()')
            times.append(time.perf_counter_ns() - t)
print(result)
print(int(statistics.median(times)))
