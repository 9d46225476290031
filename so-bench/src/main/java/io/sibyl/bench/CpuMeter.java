package io.sibyl.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Predicate;

/**
 * CPU time consumed so far, in nanoseconds: of this process, of another process (from {@code /proc/PID/stat}), or of
 * the threads of this process whose names match (the in-process oracle's). Returns -1 when it cannot tell.
 */
final class CpuMeter {
    /** Linux reports utime / stime in USER_HZ ticks, which is 100 on every architecture Java runs on. */
    private static final long NANOS_PER_TICK = 10_000_000L;

    private CpuMeter() {
    }

    static long self() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            long t = sun.getProcessCpuTime();
            if (t >= 0) {
                return t;
            }
        }
        return process(ProcessHandle.current().pid());
    }

    /** User plus system time of process {@code pid}, or -1 if /proc/PID/stat cannot be read. */
    static long process(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" +");
            long utime = Long.parseLong(f[11]); // field 14
            long stime = Long.parseLong(f[12]); // field 15
            return (utime + stime) * NANOS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** CPU time of the live threads of this process whose name matches. */
    static long threads(Predicate<String> name) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isThreadCpuTimeSupported()) {
            return -1;
        }
        long sum = 0;
        for (ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (info != null && name.test(info.getThreadName())) {
                long t = mx.getThreadCpuTime(info.getThreadId());
                if (t > 0) {
                    sum += t;
                }
            }
        }
        return sum;
    }

    /** Threads the oracle server starts: its sequencer and its Netty acceptor and I/O threads. */
    static boolean isOracleThread(String name) {
        return name.startsWith("sibyl-sequencer") || name.startsWith("sibyl-io") || name.startsWith("sibyl-accept");
    }

    /** CPU of the bench and of the oracle at one instant. */
    record Sample(long bench, long oracle) {
        /** @param serverPid separate oracle process, 0 if none; {@code inProcess} if the oracle runs in this JVM */
        static Sample take(long serverPid, boolean inProcess) {
            long self = self();
            if (inProcess) {
                long oracle = threads(CpuMeter::isOracleThread);
                return new Sample(self < 0 || oracle < 0 ? -1 : self - oracle, oracle);
            }
            return new Sample(self, serverPid > 0 ? process(serverPid) : -1);
        }

        /** Percent of one core used between {@code earlier} and this sample, or NaN if unknown. */
        static double percent(long from, long to, long elapsedNanos) {
            if (from < 0 || to < 0 || elapsedNanos <= 0) {
                return Double.NaN;
            }
            return 100.0 * (to - from) / elapsedNanos;
        }
    }
}
