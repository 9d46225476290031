package io.sibyl.oracle.ha;

import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A closed-loop write load that follows the leader znode across failovers: each thread begins and commits
 * 8-row transactions against the announced leader; when its connection fails it waits for a leader of a higher
 * epoch and carries on. Records every acknowledged commit, every timestamp received (to find repeats) and, per
 * epoch, when the first commit of that leader was acknowledged.
 */
final class FailoverLoad implements AutoCloseable {
    final Map<Long, Long> acked = new ConcurrentHashMap<>();
    final Set<Long> timestamps = ConcurrentHashMap.newKeySet();
    final List<Long> repeated = java.util.Collections.synchronizedList(new ArrayList<>());
    final Map<Long, Long> firstCommitNanos = new ConcurrentHashMap<>();
    final Map<Long, Long> firstSeenNanos = new ConcurrentHashMap<>();
    final Map<Long, Long> firstHelloNanos = new ConcurrentHashMap<>();
    /** Transactions begun whose commit got no answer (the connection failed): committed or aborted, never running. */
    final Set<Long> unanswered = ConcurrentHashMap.newKeySet();
    final AtomicLong aborts = new AtomicLong();
    final AtomicLong connectionFailures = new AtomicLong();
    private final ZooKeeper zk;
    private final String leaderZnode;
    private final List<Thread> threads = new ArrayList<>();
    private final long pauseMicros;
    private volatile boolean stop;

    FailoverLoad(ZooKeeper zk, String leaderZnode, int threadCount, long pauseMicros) {
        this.zk = zk;
        this.leaderZnode = leaderZnode;
        this.pauseMicros = pauseMicros;
        for (int i = 0; i < threadCount; i++) {
            Thread t = new Thread(this::run, "failover-load-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
    }

    FailoverLoad start() {
        threads.forEach(Thread::start);
        return this;
    }

    private void run() {
        long minEpoch = 0;
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        while (!stop) {
            LeaderRecord leader;
            try {
                leader = awaitLeader(minEpoch);
            } catch (Exception e) {
                return;
            }
            if (leader == null) {
                return;
            }
            long start = 0;
            try (RawOracleClient c = RawOracleClient.connect(leader.host(), leader.port(), 5000)) {
                firstHelloNanos.putIfAbsent(leader.epoch(), System.nanoTime());
                while (!stop) {
                    start = 0;
                    start = c.begin();
                    see(start);
                    long[] rows = new long[8];
                    for (int i = 0; i < rows.length; i++) {
                        rows[i] = rnd.nextLong(1, 1L << 40);
                    }
                    RawOracleClient.Reply r = c.commit(start, rows);
                    if (r.type() == Wire.COMMITTED) {
                        see(r.commitTs());
                        acked.put(start, r.commitTs());
                        firstCommitNanos.putIfAbsent(leader.epoch(), System.nanoTime());
                    } else {
                        aborts.incrementAndGet();
                    }
                    if (pauseMicros > 0) {
                        Thread.sleep(pauseMicros / 1000, (int) (pauseMicros % 1000) * 1000);
                    }
                }
            } catch (IOException e) {
                if (start != 0) {
                    unanswered.add(start);
                }
                connectionFailures.incrementAndGet();
                minEpoch = leader.epoch() + 1; // that leader is gone: wait for the next one
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void see(long ts) {
        if (!timestamps.add(ts)) {
            repeated.add(ts);
        }
    }

    /** Polls the leader znode (every millisecond) until it announces an epoch of at least {@code minEpoch}. */
    private LeaderRecord awaitLeader(long minEpoch) throws KeeperException, InterruptedException {
        while (!stop) {
            LeaderRecord r = LeaderZnode.read(zk, leaderZnode);
            if (r != null && r.epoch() >= minEpoch) {
                firstSeenNanos.putIfAbsent(r.epoch(), System.nanoTime());
                return r;
            }
            Thread.sleep(1);
        }
        return null;
    }

    /** First commit acknowledged by the leader of {@code epoch}, in System.nanoTime terms, or -1. */
    long firstCommitOf(long epoch) {
        return firstCommitNanos.getOrDefault(epoch, -1L);
    }

    @Override
    public void close() {
        stop = true;
        try {
            for (Thread t : threads) {
                t.join(10_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return acked.size() + " commits acknowledged, " + aborts.get() + " aborts, " + connectionFailures.get()
                + " connections lost, first commit per epoch " + firstCommitNanos.keySet();
    }
}
