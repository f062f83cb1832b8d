import textwrap
from textwrap import dedent

HEADER = textwrap.dedent(
    """
    Monthly report for {team}
    =========================
    Period: {start:%Y-%m-%d} to {end:%Y-%m-%d}
    """
)

ROW = "  {name:<20} {amount:>12,.2f} {share:>7.1%}\n"

FOOTER = """
Totals
------
  {count} entries, {total:,.2f} in all; largest: {largest[name]} ({largest[amount]:,.2f})
  Prepared automatically. Figures are rounded to two decimals; shares to one decimal place.
  Questions about this report go to the team's analyst, who keeps the sources and the notes.
"""


def main(args):
    import datetime

    entries = args.get("entries", [{"name": "north", "amount": 1200.5}, {"name": "south", "amount": 800}])
    total = sum(e["amount"] for e in entries)
    out = HEADER.format(team=args.get("team", "sales"), start=datetime.date(2024, 5, 1),
                        end=datetime.date(2024, 5, 31))
    for e in entries:
        out += ROW.format(name=e["name"], amount=e["amount"], share=e["amount"] / total)
    largest = max(entries, key=lambda e: e["amount"])
    out += FOOTER.strip().format(count=len(entries), total=total, largest=largest)
    note = dedent("""
        Note for {who}: {text}
    """).format(who="reviewers", text="draft")
    return out + "\n" + note
