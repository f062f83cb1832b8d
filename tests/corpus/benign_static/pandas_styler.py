import pandas as pd

df = pd.DataFrame({"name": ["a", "b"], "ratio": [0.1234, 0.5]})
html = df.style.format({"ratio": "{:.1%}"}).hide(axis="index").to_html()
print(len(html) > 0)
