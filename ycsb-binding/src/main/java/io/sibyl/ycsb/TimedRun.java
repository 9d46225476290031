package io.sibyl.ycsb;

import java.util.Properties;

/**
 * {@code operationcount=0} with {@code maxexecutiontime=S}: YCSB's way to run for S seconds. YCSB 0.17's Client
 * breaks it: it lowers the thread count to the operation count, so with 0 operations it starts no client thread and
 * the run ends at once with nothing done (YCSB issue 1382). {@code site.ycsb.Client} reads the operation count
 * after {@code Workload.init} and from the same properties, so our workloads set it there to as many operations as
 * YCSB can count; the run then ends at {@code maxexecutiontime}. {@code bin/sibyl-ycsb} does the same for every
 * workload, YCSB's {@code CoreWorkload} included.
 */
final class TimedRun {
    /** More operations than a timed run can do; YCSB counts operations in an int. */
    static final int UNBOUNDED = Integer.MAX_VALUE;

    private TimedRun() {
    }

    /** In a run phase ({@code dotransactions}) of {@code operationcount=0} and a time limit, lifts the count. */
    static void apply(Properties p) {
        if (!Boolean.parseBoolean(p.getProperty("dotransactions", "true"))) {
            return;
        }
        if (parse(p.getProperty("operationcount")) == 0 && parse(p.getProperty("maxexecutiontime")) > 0) {
            p.setProperty("operationcount", Integer.toString(UNBOUNDED));
            System.err.println("sibyl: operationcount=0: running until maxexecutiontime ("
                    + p.getProperty("maxexecutiontime").trim() + " s)");
        }
    }

    private static long parse(String v) {
        try {
            return v == null ? -1 : Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
