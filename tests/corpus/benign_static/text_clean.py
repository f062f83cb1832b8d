import html
import re
import string
import textwrap
import unicodedata

_WS = re.compile(r"\s+")


def clean(text: str) -> str:
    text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if ch not in string.punctuation or ch in ".,")
    return _WS.sub(" ", text).strip()


def main(content: str) -> dict:
    cleaned = clean(content)
    return {"result": textwrap.fill(cleaned, width=60), "length": len(cleaned)}


print(main("Caf&eacute;   &amp;  bar!!  \n  ＡＢＣ"))
