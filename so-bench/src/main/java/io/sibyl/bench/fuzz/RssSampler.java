package io.sibyl.bench.fuzz;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;

/** Samples the oracle process's resident memory (VmRSS of /proc/PID/status) twice a second while the run goes on. */
final class RssSampler implements Runnable {
    private static final long PERIOD_MILLIS = 500;

    private final long pid;
    private final BooleanSupplier stop;
    private volatile long firstKb = -1;
    private volatile long maxKb = -1;
    private volatile long lastKb = -1;
    private volatile int samples;

    RssSampler(long pid, BooleanSupplier stop) {
        this.pid = pid;
        this.stop = stop;
    }

    @Override
    public void run() {
        try {
            while (!stop.getAsBoolean()) {
                sample();
                Thread.sleep(PERIOD_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Takes one sample now (also called once more at the end of the run). */
    synchronized void sample() {
        long kb = rssKb(pid);
        if (kb < 0) {
            return;
        }
        if (firstKb < 0) {
            firstKb = kb;
        }
        maxKb = Math.max(maxKb, kb);
        lastKb = kb;
        samples++;
    }

    long firstKb() {
        return firstKb;
    }

    long maxKb() {
        return maxKb;
    }

    long lastKb() {
        return lastKb;
    }

    int samples() {
        return samples;
    }

    /** VmRSS of process {@code pid} in KiB, or -1 if it is gone (or this is not Linux). */
    static long rssKb(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // gone, or no /proc: no sample
        }
        return -1;
    }
}
