from urllib.parse import urlparse, parse_qs, urlencode


def main(url: str) -> dict:
    u = urlparse(url)
    params = {k: v[0] for k, v in parse_qs(u.query).items()}
    params.pop("utm_source", None)
    clean = u._replace(query=urlencode(sorted(params.items()))).geturl()
    return {"host": u.netloc, "path": u.path, "params": params, "clean": clean}


print(main("https://example.org/a/b?x=1&utm_source=mail&y=2"))
