package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.LeaderRecord;
import org.apache.zookeeper.ZooKeeper;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The failover benchmark ({@code bin/so-failover-bench}): ZooKeeper and 3 bookies in this JVM, a leader and a warm
 * standby so-server ({@code --ha=true}) in their own JVMs, a light closed-loop load that follows the leader znode.
 * Each round kills the leader with SIGKILL and measures the time from the kill to the first commit acknowledged by
 * the new leader, then starts a fresh standby for the next round. Prints each round, then min / median / max.
 */
public final class FailoverBench {
    private FailoverBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = 5;
        int threads = 2;
        long warmupMs = 3000;
        long pauseMicros = 500;
        String oracleJvm = "-Xms1g -Xmx1g -XX:+UseParallelGC -XX:+AlwaysPreTouch -XX:+UseTransparentHugePages";
        List<String> oracleFlags = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--rounds" -> rounds = Integer.parseInt(need(a, v));
                case "--threads" -> threads = Integer.parseInt(need(a, v));
                case "--warmup-ms" -> warmupMs = Long.parseLong(need(a, v));
                case "--pause-us" -> pauseMicros = Long.parseLong(need(a, v));
                case "--oracle-jvm" -> oracleJvm = need(a, v);
                case "--oracle-flag" -> oracleFlags.add(need(a, v));
                default -> {
                    System.err.println("so-failover-bench: unknown argument '" + a + "' (see bin/so-failover-bench"
                            + " --help)");
                    System.exit(2);
                }
            }
            i++;
        }
        if (rounds < 1 || threads < 1 || warmupMs < 0 || pauseMicros < 0) {
            System.err.println("so-failover-bench: --rounds and --threads must be at least 1, times not negative");
            System.exit(2);
        }
        List<String> jvm = Arrays.asList(oracleJvm.trim().split("\\s+"));
        int code = 1;
        try (BookKeeperCluster cluster = BookKeeperCluster.start(3)) {
            code = run(cluster, rounds, threads, warmupMs, pauseMicros, jvm, oracleFlags);
        } catch (Exception | Error e) {
            // Said before the exit below, which would otherwise end the JVM before the stack trace is printed.
            System.err.println("so-failover-bench: failed: " + e);
            e.printStackTrace();
        } finally {
            System.exit(code);
        }
    }

    private static String need(String flag, String value) {
        if (value == null) {
            System.err.println("so-failover-bench: " + flag + " needs a value");
            System.exit(2);
        }
        return value;
    }

    private static int run(BookKeeperCluster cluster, int rounds, int threads, long warmupMs, long pauseMicros,
                           List<String> jvm, List<String> extraFlags) throws Exception {
        List<String> flags = StandbyTakeoverTest.haFlags(cluster, "bench");
        flags.removeIf(f -> f.startsWith("--conflict.table.rows") || f.startsWith("--recent.commits.capacity")
                || f.startsWith("--max.running.transactions") || f.startsWith("--push.interval.ms"));
        flags.addAll(extraFlags); // default sizes: the oracle as users run it, unless flags say otherwise
        String leaderZnode = "/sibyl/test/bench/leader";
        JournalSettings s = cluster.settings("bench-client");
        ZooKeeper zk = cluster.zooKeeper(s);
        System.out.println("so-failover-bench: " + rounds + " rounds, " + threads + " load threads, oracle JVM " + jvm
                + ", flags " + flags);
        List<OracleProcess> processes = new ArrayList<>();
        double[] ms = new double[rounds];
        try {
            OracleProcess leader = new OracleProcess("oracle-0", jvm, flags);
            processes.add(leader);
            leader.awaitReady(60_000);
            OracleProcess standby = new OracleProcess("oracle-1", jvm, flags);
            processes.add(standby);
            standby.owner(60_000);
            FailoverLoad load = new FailoverLoad(zk, leaderZnode, threads, pauseMicros).start();
            try {
                for (int round = 0; round < rounds; round++) {
                    Thread.sleep(warmupMs); // the standby tails the journal meanwhile
                    LeaderRecord before = LeaderZnode.read(zk, leaderZnode);
                    long killedAt = System.nanoTime();
                    leader.process.destroyForcibly();
                    leader.process.waitFor(10, TimeUnit.SECONDS);
                    long reapedAt = System.nanoTime(); // the kernel closes a dead process's sockets about now
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    long first = -1;
                    while (System.nanoTime() < deadline && first < 0) {
                        LeaderRecord now = LeaderZnode.read(zk, leaderZnode);
                        if (now != null && now.epoch() > before.epoch()) {
                            first = load.firstCommitOf(now.epoch());
                        }
                        Thread.sleep(1);
                    }
                    if (first < 0) {
                        System.out.println("round " + (round + 1) + ": no commit by a new leader within 30 s; "
                                + load + "\n" + standby.tail());
                        return 1;
                    }
                    ms[round] = (first - killedAt) / 1e6;
                    long epoch = LeaderZnode.read(zk, leaderZnode).epoch();
                    String took = standby.awaitLine("took over as leader", 10_000);
                    System.out.printf("round %d: kill -9 -> first commit by the new leader %.1f ms (old leader"
                                    + " reaped at %.1f ms, clients saw the new leader znode at %.1f ms, had its HELLO"
                                    + " at %.1f ms; %s)%n", round + 1, ms[round], (reapedAt - killedAt) / 1e6, (load.firstSeenNanos.getOrDefault(epoch, killedAt) - killedAt) / 1e6,
                            (load.firstHelloNanos.getOrDefault(epoch, killedAt) - killedAt) / 1e6,
                            took.substring(took.indexOf("takeover took")));
                    leader = standby;
                    if (round + 1 < rounds) {
                        standby = new OracleProcess("oracle-" + (round + 2), jvm, flags);
                        processes.add(standby);
                        standby.owner(60_000);
                    }
                }
            } finally {
                load.close();
            }
            System.out.println("load: " + load + (load.repeated.isEmpty() ? "" : "; REPEATED TIMESTAMPS "
                    + load.repeated));
            double[] sorted = ms.clone();
            Arrays.sort(sorted);
            System.out.printf("failover (kill -9 -> first commit by the new leader) over %d rounds: min %.1f ms,"
                    + " median %.1f ms, max %.1f ms%n", rounds, sorted[0], sorted[rounds / 2], sorted[rounds - 1]);
            return load.repeated.isEmpty() ? 0 : 1;
        } finally {
            for (OracleProcess p : processes) {
                p.close();
            }
        }
    }
}
