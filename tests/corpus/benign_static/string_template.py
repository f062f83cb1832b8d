from string import Template

TEMPLATE = Template("Dear $name, your balance is $$${amount}.")


def main(name: str, amount: float) -> dict:
    msg = TEMPLATE.safe_substitute(name=name.title(), amount=f"{amount:,.2f}")
    header = "{:<10}|{:>8}".format("name", "amount")
    line = "{name:<10}|{amount:>8.2f}".format(name=name, amount=amount)
    return {"result": msg, "table": header + "\n" + line}


print(main("ann lee", 1234.5))
