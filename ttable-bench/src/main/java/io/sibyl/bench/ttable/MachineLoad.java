package io.sibyl.bench.ttable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU use of the whole machine and of this JVM from /proc (Linux), to note how busy the machine was while
 * measuring: a benchmark on a shared 2-core box is only comparable with itself.
 */
final class MachineLoad {
    /** Jiffies: all CPUs busy, all CPUs total, this process (user + system). */
    record Sample(long busy, long total, long self) {
        static Sample take() {
            try {
                // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
                String cpu = Files.readAllLines(Path.of("/proc/stat")).get(0);
                String[] f = cpu.trim().split("\\s+");
                long total = 0;
                for (int i = 1; i < f.length && i <= 8; i++) { // user..steal; guest is already in user
                    total += Long.parseLong(f[i]);
                }
                long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
                String self = Files.readString(Path.of("/proc/self/stat"));
                String[] s = self.substring(self.lastIndexOf(')') + 2).trim().split("\\s+");
                long proc = Long.parseLong(s[11]) + Long.parseLong(s[12]); // utime, stime (fields 14, 15)
                return new Sample(total - idle, total, proc);
            } catch (IOException | RuntimeException e) {
                return new Sample(-1, -1, -1);
            }
        }

        boolean valid() {
            return total > 0;
        }
    }

    private MachineLoad() {
    }

    /** "bench JVM x% of the machine, other processes y%" between two samples, or "" without /proc. */
    static String describe(Sample a, Sample b) {
        if (!a.valid() || !b.valid() || b.total <= a.total) {
            return "";
        }
        double total = b.total - a.total;
        double self = 100.0 * (b.self - a.self) / total;
        double others = 100.0 * ((b.busy - a.busy) - (b.self - a.self)) / total;
        return String.format(java.util.Locale.ROOT, "bench JVM (minicluster + oracle + clients) used %.0f%% of the"
                + " machine's CPU, other processes %.0f%%", self, Math.max(0, others));
    }

    /**
     * Voluntary context switches of every thread of this JVM so far (a thread that blocks: parks, waits for a lock,
     * a socket, epoll), or -1 without /proc. Each wake-up of a thread follows one, so their count per operation is
     * the thread hand-offs an operation costs, clients, oracle and minicluster together. Threads that ended are not
     * counted (their switches leave the sum), which over a round of a few seconds is noise.
     */
    static long voluntarySwitches() {
        try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            long sum = 0;
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            sum += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException | RuntimeException gone) {
                    // the thread ended while we looked
                }
            }
            return sum;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Voluntary context switches so far per thread group: the thread's name without its trailing number (so the
     * handlers of one pool count together), or an empty map without /proc. Shows which threads an operation wakes.
     */
    static java.util.Map<String, Long> voluntarySwitchesByThread() {
        java.util.Map<String, Long> byGroup = new java.util.TreeMap<>();
        try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    String group = Files.readString(t.resolve("comm")).trim().replaceAll("[-_.#,=:0-9 ]+$", "");
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            byGroup.merge(group, Long.parseLong(line.substring(line.indexOf(':') + 1).trim()),
                                    Long::sum);
                        }
                    }
                } catch (IOException | RuntimeException gone) {
                    // the thread ended while we looked
                }
            }
        } catch (IOException | RuntimeException e) {
            byGroup.clear();
        }
        return byGroup;
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "n/a";
        }
    }
}
