# asyncio: the runner drives an async main (its loop uses an AF_UNIX socketpair).
import json


async def main(n=3):
    return json.loads(json.dumps({"n": n}))["n"] * 2
