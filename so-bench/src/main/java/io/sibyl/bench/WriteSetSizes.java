package io.sibyl.bench;

import java.util.concurrent.ThreadLocalRandom;

/** Number of rows a write transaction writes: always K, or uniform over 1..2K-1 (mean K). */
record WriteSetSizes(BenchOptions.SizeDistribution distribution, int mean) {
    static WriteSetSizes of(BenchOptions o) {
        return new WriteSetSizes(o.writeSetDistribution, o.writeSet);
    }

    int next(ThreadLocalRandom random) {
        return distribution == BenchOptions.SizeDistribution.FIXED ? mean : 1 + random.nextInt(2 * mean - 1);
    }

    int max() {
        return distribution == BenchOptions.SizeDistribution.FIXED ? mean : 2 * mean - 1;
    }
}
