package io.sibyl.bench;

import java.util.concurrent.ThreadLocalRandom;

/** Draws key numbers in {@code [0, keys)}; safe to call from any thread. */
interface KeyChooser {
    long next(ThreadLocalRandom random);

    static KeyChooser of(BenchOptions o) {
        return switch (o.keyDistribution) {
            case UNIFORM -> new UniformKeys(o.keys);
            case ZIPFIAN -> new ZipfianKeys(o.keys, o.zipfTheta);
        };
    }

    /** Every key equally likely. */
    record UniformKeys(long keys) implements KeyChooser {
        @Override
        public long next(ThreadLocalRandom random) {
            return random.nextLong(keys);
        }
    }
}
