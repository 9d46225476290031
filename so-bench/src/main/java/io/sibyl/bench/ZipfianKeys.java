package io.sibyl.bench;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Zipfian key ranks over {@code [0, n)}: rank i is drawn with probability proportional to {@code 1 / (i+1)^theta},
 * rank 0 the hottest. Uses the closed-form inversion of Gray, Sundaresan, Englert, Baclawski and Weinberger,
 * "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994): after computing the generalised harmonic
 * number zeta(n, theta) once, each draw costs one uniform variate and one {@code pow}. Hot ranks are adjacent
 * numbers, but row ids are a bijective hash of the key number, so they spread over the oracle's conflict table.
 */
final class ZipfianKeys implements KeyChooser {
    private final long n;
    private final double theta;
    private final double zetaN;
    private final double alpha;
    private final double eta;
    private final double secondThreshold;

    ZipfianKeys(long n, double theta) {
        if (n < 1 || !(theta > 0 && theta < 1)) {
            throw new IllegalArgumentException("zipfian needs n >= 1 and 0 < theta < 1");
        }
        this.n = n;
        this.theta = theta;
        this.zetaN = zeta(n, theta);
        double zeta2 = zeta(Math.min(2, n), theta);
        this.alpha = 1.0 / (1.0 - theta);
        this.eta = n <= 2 ? 0 : (1.0 - Math.pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / zetaN);
        this.secondThreshold = 1.0 + Math.pow(0.5, theta);
    }

    /** Sum of 1 / i^theta for i = 1..n (summed from the small terms up, for accuracy). */
    static double zeta(long n, double theta) {
        double sum = 0;
        for (long i = n; i >= 1; i--) {
            sum += 1.0 / Math.pow(i, theta);
        }
        return sum;
    }

    double zetaN() {
        return zetaN;
    }

    @Override
    public long next(ThreadLocalRandom random) {
        double u = random.nextDouble();
        double uz = u * zetaN;
        if (uz < 1.0) {
            return 0;
        }
        if (n >= 2 && uz < secondThreshold) {
            return 1;
        }
        long rank = (long) (n * Math.pow(eta * u - eta + 1.0, alpha));
        return Math.min(Math.max(rank, 0), n - 1);
    }

    @Override
    public String toString() {
        return "zipfian(n=" + n + ", theta=" + theta + ")";
    }
}
