import asyncio

async def g(n):
    async with L() as l:
        async for x in l:
            yield x
    await asyncio.sleep(0)

lambda a, /, b=2, **kw: (a, b, kw)
