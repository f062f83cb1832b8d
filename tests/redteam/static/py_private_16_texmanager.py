# family: private-api (dangerous public) — TexManager runs latex
import matplotlib
matplotlib.texmanager.TexManager().make_dvi("x", 12)
