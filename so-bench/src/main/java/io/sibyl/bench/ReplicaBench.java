package io.sibyl.bench;

import io.netty.buffer.Unpooled;
import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleState;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Memory and apply cost of a client's replica under the so-bench load (issue 18). First an in-process
 * {@link OracleState} at its default settings decides one connection's stream of 8-row transactions on 20M uniform keys (or
 * {@code --keys}) with 256 outstanding (the next begins as one commits), sealing a block every {@code --block}
 * requests; the blocks are kept with the starts each one begins and ends. Then each round replays them into a fresh
 * {@link CommitReplica} and a fresh {@link HashedCommitsBaseline} (the storage it replaced), which register the
 * outstanding transactions as local readers as the client does. Per replica it reports bytes held by capacity (peak and
 * at the end), commits held, and the median over rounds of nanoseconds of {@code apply} per applied commit (the first
 * fifth of each round is a warm-up). The rate does not matter: what a replica holds depends on the decisions.
 */
public final class ReplicaBench {
    private static final int WRITE_SET = 8;

    private ReplicaBench() {
    }

    /** The flags of bin/so-bench-replica: the stream decided and how often it is replayed. */
    @Command(name = "so-bench-replica", sortOptions = false, abbreviateSynopsis = true, usageHelpWidth = 110,
            description = {"Memory and apply cost of a client's replica under the so-bench load: an in-process"
                    + " oracle decides one connection's stream of 8-row transactions, then each round replays it"
                    + " into a fresh CommitReplica and into the hashed baseline it replaced. Flags take"
                    + " '--flag value' or '--flag=value'.", ""})
    static final class Flags {
        @Option(names = "--transactions", paramLabel = "N", description = "transactions decided (${DEFAULT-VALUE})")
        long transactions = 4_000_000;

        @Option(names = "--window", paramLabel = "W", description = "outstanding transactions (${DEFAULT-VALUE})")
        int window = 256;

        @Option(names = "--block", paramLabel = "B", description = "requests per sealed block (${DEFAULT-VALUE})")
        int block = 128;

        @Option(names = "--rounds", paramLabel = "R", description = "replays measured (${DEFAULT-VALUE})")
        int rounds = 3;

        @Option(names = "--keys", paramLabel = "K",
                description = "uniform key space (${DEFAULT-VALUE}); at most 16777216 rows never evict, so T_max"
                        + " moves only when the oracle's 1,048,576-commit window is full: the most a replica holds"
                        + " at the defaults")
        long keys = 20_000_000L;

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
        boolean help;
    }

    public static void main(String[] args) {
        Flags f = new Flags();
        try {
            if (BenchCommandLine.parse(f, args)) {
                System.out.println(BenchCommandLine.usage(new Flags()));
                return;
            }
        } catch (UsageException e) {
            System.err.println("so-bench-replica: " + e.getMessage());
            System.err.println(BenchCommandLine.usage(new Flags()));
            System.exit(2);
            return;
        }
        long transactions = f.transactions;
        int window = f.window;
        int block = f.block;
        int rounds = f.rounds;
        long keys = f.keys;
        long t0 = System.nanoTime();
        Stream stream = Stream.decide(transactions, window, block, keys);
        System.out.printf(Locale.ROOT, "replica-bench: %,d transactions on %,d keys (%,d aborted), %d per block,"
                        + " %d outstanding; decided in %.1f s; oracle T_max %,d, clock %,d%n", transactions, keys,
                stream.aborts, block / 2, window, (System.nanoTime() - t0) / 1e9, stream.tMax, stream.clock);
        Figures ring = new Figures("CommitReplica (ring)");
        Figures hashed = new Figures("hashed baseline (882c189)");
        for (int r = 0; r < rounds; r++) {
            ring.add(stream.replayIntoReplica());
            hashed.add(stream.replayIntoBaseline());
        }
        System.out.printf(Locale.ROOT, "%-26s %12s %12s %13s %12s %s%n", "replica", "peak bytes", "end bytes",
                "peak commits", "end commits", "ns/commit (median; rounds)");
        ring.print();
        hashed.print();
    }

    /** The decided blocks, with the starts each block's replies begin and end on the client. */
    private static final class Stream {
        final List<byte[]> blocks = new ArrayList<>();
        final List<long[]> begun = new ArrayList<>();
        final List<long[]> ended = new ArrayList<>();
        final List<Integer> commits = new ArrayList<>();
        long aborts;
        long tMax;
        long clock;
        long tInit;

        static Stream decide(long transactions, int window, int block, long keys) {
            Stream s = new Stream();
            OracleState oracle = new OracleState(OracleConfig.defaults());
            s.tInit = oracle.clock() + 1;
            ThreadLocalRandom random = ThreadLocalRandom.current();
            ArrayDeque<Long> outstanding = new ArrayDeque<>();
            long[] rows = new long[WRITE_SET];
            List<Long> begun = new ArrayList<>();
            List<Long> ended = new ArrayList<>();
            for (int i = 0; i < window; i++) {
                begun.add(begin(oracle, outstanding));
            }
            long done = 0;
            while (done < transactions) {
                int committed = 0;
                for (int r = 0; r < block / 2 && done < transactions; r++, done++) {
                    long start = outstanding.poll();
                    for (int k = 0; k < WRITE_SET; k++) {
                        rows[k] = WriteSets.rowId(random.nextLong(keys));
                    }
                    if (oracle.commit(start, rows, WRITE_SET) > 0) {
                        committed++;
                    } else {
                        s.aborts++;
                        oracle.cleanedUp(start); // the client deletes its versions and reports it
                    }
                    ended.add(start);
                    begun.add(begin(oracle, outstanding));
                }
                s.blocks.add(oracle.sealBlock());
                s.begun.add(begun.stream().mapToLong(Long::longValue).toArray());
                s.ended.add(ended.stream().mapToLong(Long::longValue).toArray());
                s.commits.add(committed);
                begun.clear();
                ended.clear();
            }
            s.tMax = oracle.tMax();
            s.clock = oracle.clock();
            return s;
        }

        private static long begin(OracleState oracle, ArrayDeque<Long> outstanding) {
            long ts = oracle.begin(1);
            if (ts <= 0) {
                throw new IllegalStateException("the oracle refused a begin: " + ts);
            }
            outstanding.add(ts);
            return ts;
        }

        Round replayIntoReplica() {
            CommitReplica replica = new CommitReplica(tInit, 0, new long[0]);
            Round round = new Round();
            for (int b = 0; b < blocks.size(); b++) {
                // The client's two passes: register the new readers, apply the delta, then let the ended ones go.
                for (long ts : begun.get(b)) {
                    replica.registerReader(ts);
                }
                long t0 = System.nanoTime();
                replica.apply(Unpooled.wrappedBuffer(blocks.get(b)));
                round.time(b, blocks.size(), System.nanoTime() - t0, commits.get(b));
                for (long ts : ended.get(b)) {
                    replica.unregisterReader(ts);
                }
                if (b % 256 == 0 || b == blocks.size() - 1) {
                    round.sample(replica.memoryBytes(), replica.commitCount());
                }
            }
            return round;
        }

        Round replayIntoBaseline() {
            HashedCommitsBaseline baseline = new HashedCommitsBaseline();
            ArrayDeque<Long> readers = new ArrayDeque<>();
            Round round = new Round();
            for (int b = 0; b < blocks.size(); b++) {
                for (long ts : begun.get(b)) {
                    readers.add(ts); // starts arrive in order and end oldest first
                }
                long oldest = readers.isEmpty() ? Long.MAX_VALUE : readers.peek();
                long t0 = System.nanoTime();
                baseline.apply(Unpooled.wrappedBuffer(blocks.get(b)), oldest);
                round.time(b, blocks.size(), System.nanoTime() - t0, commits.get(b));
                for (int k = 0; k < ended.get(b).length; k++) {
                    readers.poll();
                }
                if (b % 256 == 0 || b == blocks.size() - 1) {
                    round.sample(baseline.bytes(), baseline.commitCount());
                }
            }
            return round;
        }
    }

    /** What one replay measured. */
    private static final class Round {
        long nanos;
        long timedCommits;
        long peakBytes;
        long endBytes;
        int peakCommits;
        int endCommits;

        void time(int block, int blocks, long elapsed, int commits) {
            if (block >= blocks / 5) {
                nanos += elapsed;
                timedCommits += commits;
            }
        }

        void sample(long bytes, int commits) {
            peakBytes = Math.max(peakBytes, bytes);
            peakCommits = Math.max(peakCommits, commits);
            endBytes = bytes;
            endCommits = commits;
        }

        double nanosPerCommit() {
            return timedCommits == 0 ? 0 : (double) nanos / timedCommits;
        }
    }

    /** One replica's rounds. */
    private static final class Figures {
        final String name;
        final List<Round> rounds = new ArrayList<>();

        Figures(String name) {
            this.name = name;
        }

        void add(Round r) {
            rounds.add(r);
        }

        void print() {
            double[] ns = rounds.stream().mapToDouble(Round::nanosPerCommit).sorted().toArray();
            Round last = rounds.get(rounds.size() - 1);
            String each = Arrays.toString(rounds.stream().mapToDouble(Round::nanosPerCommit)
                    .mapToObj(v -> String.format(Locale.ROOT, "%.1f", v)).toArray());
            System.out.printf(Locale.ROOT, "%-26s %,12d %,12d %,13d %,12d %.1f %s%n", name, last.peakBytes,
                    last.endBytes, last.peakCommits, last.endCommits, ns[ns.length / 2], each);
        }
    }
}
