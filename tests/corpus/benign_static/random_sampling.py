import random
import statistics

random.seed(7)
population = list(range(1, 1001))
sample = random.sample(population, 50)
boot = [statistics.mean(random.choices(sample, k=len(sample))) for _ in range(200)]
boot.sort()
lo, hi = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot))]
print("mean %.1f, 95%% CI [%.1f, %.1f]" % (statistics.mean(sample), lo, hi))
