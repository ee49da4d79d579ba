"""The Python SDK's own round trip to the same server as `round_trip.rs`, for comparison: the
median of N `echo` calls over stdio, after a warm-up. Arguments: the server binary, N.

    target/tmp/py-mcp/bin/python crates/cordon-mcp/benches/python_direct.py \
        target/tmp/mcp-servers/node_modules/.bin/mcp-server-everything 5000
"""
import asyncio
import statistics
import sys
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main():
    server, n = sys.argv[1], int(sys.argv[2])
    async with stdio_client(StdioServerParameters(command=server)) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            for _ in range(n):
                await session.call_tool("echo", {"message": "hi"})
            times = []
            for _ in range(n):
                start = time.perf_counter()
                await session.call_tool("echo", {"message": "hi"})
                times.append(time.perf_counter() - start)
    print(f"python sdk direct echo: median {statistics.median(times) * 1e6:.1f} us over {n} calls")


asyncio.run(main())
