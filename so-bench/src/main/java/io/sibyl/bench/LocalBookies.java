package io.sibyl.bench;

import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.util.LocalBookKeeper;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * bookies: a ZooKeeper server and N bookies in one process of their own, for running the oracle on the BookKeeper
 * journal on one machine (bin/bookies). Prints {@code READY zk=HOST:PORT bookies=N} once every bookie is registered,
 * runs until SIGTERM, and deletes its data directories on the way out. The bookie journal settings that trade latency
 * for throughput are flags ({@link Flags}, docs/journal.md).
 */
public final class LocalBookies {
    static {
        // LocalBookKeeper probes ZooKeeper with the 'stat' four-letter command; it waits 30 s if that is disabled.
        System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    }

    private LocalBookies() {
    }

    /** The flags of bin/bookies: how many bookies, the ZooKeeper port, and the bookies' journal settings. */
    @Command(name = "bookies", sortOptions = false, abbreviateSynopsis = true, usageHelpWidth = 110,
            description = {"Starts a ZooKeeper server and N bookies in this process (data in temporary directories,"
                    + " removed at exit), prints 'READY zk=HOST:PORT bookies=N' and runs until SIGTERM / Ctrl-C."
                    + " Flags take '--flag value' or '--flag=value'.", ""},
            footer = {"", "The --journal* flags are the bk_server.conf keys of the same name; they trade add latency"
                    + " for throughput (docs/journal.md)."})
    static final class Flags {
        int bookies = 3;
        /** 0: a free port. */
        int zkPort = 0;
        /**
         * The bookie journal settings, by bk_server.conf key. Our default differs from BookKeeper's on purpose: the
         * oracle batches its own adds (group commit), so a bookie that also waits for a group only adds latency
         * (stack notes: 2.7 ms -> 1.26 ms per E3/W2/A2 add).
         */
        final Map<String, String> journal = new LinkedHashMap<>();
        /** Any other bookie setting, {@code {key, value}}, in order. */
        final List<String[]> extra = new ArrayList<>();

        @Option(names = {"-h", "--help"}, usageHelp = true, order = 99, description = "this text")
        boolean help;

        Flags() {
            journal.put("journalFlushWhenQueueEmpty", "true");
            journal.put("journalMaxGroupWaitMSec", "2");
            journal.put("journalBufferedWritesThreshold", "524288");
            journal.put("journalAdaptiveGroupWrites", "true");
            journal.put("journalSyncData", "true");
        }

        @Option(names = "--bookies", paramLabel = "N", order = 1, description = "number of bookies (3)")
        private void bookies(String v) throws UsageException {
            bookies = positive("bookies", v);
        }

        @Option(names = "--zk-port", paramLabel = "P", order = 2,
                description = "ZooKeeper client port; 0 = a free port (0)")
        private void zkPort(String v) throws UsageException {
            long port = number("zk-port", v);
            if (port < 0 || port > 65535) {
                throw new UsageException("--zk-port must be 0 to 65535, got " + v);
            }
            zkPort = (int) port;
        }

        @Option(names = "--journalFlushWhenQueueEmpty", paramLabel = "B", order = 3,
                description = "fsync as soon as the journal queue is empty instead of waiting for a group (true;"
                        + " BookKeeper's own default is false)")
        private void journalFlushWhenQueueEmpty(String v) throws UsageException {
            journal.put("journalFlushWhenQueueEmpty", bool("journalFlushWhenQueueEmpty", v));
        }

        @Option(names = "--journalMaxGroupWaitMSec", paramLabel = "MS", order = 4,
                description = "longest a journal write waits for others to share its fsync, when the flag above"
                        + " does not flush earlier (2)")
        private void journalMaxGroupWaitMSec(String v) throws UsageException {
            journal.put("journalMaxGroupWaitMSec", notNegative("journalMaxGroupWaitMSec", v));
        }

        @Option(names = "--journalBufferedWritesThreshold", paramLabel = "B", order = 5,
                description = "bytes that force a journal flush regardless of the wait (524288)")
        private void journalBufferedWritesThreshold(String v) throws UsageException {
            journal.put("journalBufferedWritesThreshold", notNegative("journalBufferedWritesThreshold", v));
        }

        @Option(names = "--journalAdaptiveGroupWrites", paramLabel = "B", order = 6,
                description = "group journal writes at all (true)")
        private void journalAdaptiveGroupWrites(String v) throws UsageException {
            journal.put("journalAdaptiveGroupWrites", bool("journalAdaptiveGroupWrites", v));
        }

        @Option(names = "--journalSyncData", paramLabel = "B", order = 7,
                description = "fsync the journal; false leaves durability to replication and the page cache (true)")
        private void journalSyncData(String v) throws UsageException {
            journal.put("journalSyncData", bool("journalSyncData", v));
        }

        @Option(names = "--set", paramLabel = "KEY=VALUE", order = 8,
                description = "any other bookie setting (repeatable)")
        private void set(String v) throws UsageException {
            int e = v.indexOf('=');
            if (e <= 0) {
                throw new UsageException("--set needs KEY=VALUE, got '" + v + "'");
            }
            extra.add(new String[] {v.substring(0, e), v.substring(e + 1)});
        }
    }

    /** The usage text, as {@code --help} prints it. */
    static String usage() {
        return BenchCommandLine.usage(new Flags());
    }

    /**
     * Parses {@code args}; {@link Flags#help} set means only the usage was asked for.
     *
     * @throws UsageException naming the flag that is wrong, and why
     */
    static Flags parse(String... args) throws UsageException {
        Flags f = new Flags();
        f.help = BenchCommandLine.parse(f, args);
        return f;
    }

    public static void main(String[] args) {
        int code;
        try {
            Flags flags = parse(args);
            if (flags.help) {
                System.out.println(usage());
                code = 0;
            } else {
                code = run(flags);
            }
        } catch (UsageException e) {
            System.err.println("bookies: " + e.getMessage());
            System.err.println(usage());
            code = 2;
        } catch (Throwable t) {
            System.err.println("bookies: failed: " + t);
            t.printStackTrace();
            code = 1;
        }
        System.out.flush();
        // Bookies and ZooKeeper leave non-daemon threads behind even after close().
        System.exit(code);
    }

    static int run(Flags flags) throws Exception {
        int bookies = flags.bookies;
        int zkPort = flags.zkPort;
        Map<String, String> journal = flags.journal;
        List<String[]> extra = flags.extra;
        if (zkPort == 0) {
            try (ServerSocket s = new ServerSocket(0)) {
                zkPort = s.getLocalPort();
            }
        }
        ServerConfiguration sc = new ServerConfiguration();
        sc.setAllowLoopback(true);
        sc.setJournalFlushWhenQueueEmpty(Boolean.parseBoolean(journal.get("journalFlushWhenQueueEmpty")));
        sc.setJournalMaxGroupWaitMSec(Long.parseLong(journal.get("journalMaxGroupWaitMSec")));
        sc.setJournalBufferedWritesThreshold(Long.parseLong(journal.get("journalBufferedWritesThreshold")));
        sc.setJournalAdaptiveGroupWrites(Boolean.parseBoolean(journal.get("journalAdaptiveGroupWrites")));
        sc.setJournalSyncData(Boolean.parseBoolean(journal.get("journalSyncData")));
        for (String[] kv : extra) {
            sc.setProperty(kv[0], kv[1]);
        }

        long t0 = System.nanoTime();
        LocalBookKeeper local = LocalBookKeeper.getLocalBookies("127.0.0.1", zkPort, bookies, true, sc);
        local.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                local.close(); // removes the temporary data directories
            } catch (Exception e) {
                System.err.println("bookies: stopping: " + e);
            }
            stopped.countDown();
        }, "bookies-shutdown"));
        StringBuilder settings = new StringBuilder();
        journal.forEach((k, v) -> settings.append(' ').append(k).append('=').append(v));
        for (String[] kv : extra) {
            settings.append(' ').append(kv[0]).append('=').append(kv[1]);
        }
        System.out.printf(Locale.ROOT, "bookies: ZooKeeper and %d bookies started in %.1f s;%s%n", bookies,
                (System.nanoTime() - t0) / 1e9, settings);
        System.out.println("READY zk=127.0.0.1:" + zkPort + " bookies=" + bookies);
        System.out.flush();
        stopped.await();
        return 0;
    }

    private static long number(String name, String v) throws UsageException {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a whole number, got '" + v + "'");
        }
    }

    private static int positive(String name, String v) throws UsageException {
        long n = number(name, v);
        if (n < 1 || n > Integer.MAX_VALUE) {
            throw new UsageException("--" + name + " must be at least 1, got " + v);
        }
        return (int) n;
    }

    private static String notNegative(String name, String v) throws UsageException {
        if (number(name, v) < 0) {
            throw new UsageException("--" + name + " must not be negative, got " + v);
        }
        return v;
    }

    private static String bool(String name, String v) throws UsageException {
        if (!v.equals("true") && !v.equals("false")) {
            throw new UsageException("--" + name + " must be true or false, got '" + v + "'");
        }
        return v;
    }
}
