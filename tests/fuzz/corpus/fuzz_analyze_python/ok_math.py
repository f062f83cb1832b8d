import math
from statistics import mean

def main():
    xs = [math.sqrt(i) for i in range(10)]
    return {"mean": mean(xs), "max": max(xs)}
