package io.sibyl.bench;

import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.util.LocalBookKeeper;

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
 * for throughput are flags (see {@link #usage()} and docs/journal.md).
 */
public final class LocalBookies {
    static {
        // LocalBookKeeper probes ZooKeeper with the 'stat' four-letter command; it waits 30 s if that is disabled.
        System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    }

    private LocalBookies() {
    }

    static String usage() {
        return String.join("\n",
                "usage: bookies [flags]   (flags take '--flag value' or '--flag=value')",
                "Starts a ZooKeeper server and N bookies in this process (data in temporary directories, removed at",
                "exit), prints 'READY zk=HOST:PORT bookies=N' and runs until SIGTERM / Ctrl-C.",
                "  --bookies N                         number of bookies (3)",
                "  --zk-port P                         ZooKeeper client port; 0 = a free port (0)",
                "Bookie journal (bk_server.conf keys of the same name; they trade add latency for throughput):",
                "  --journalFlushWhenQueueEmpty B      fsync as soon as the journal queue is empty instead of waiting",
                "                                      for a group (true; BookKeeper's own default is false)",
                "  --journalMaxGroupWaitMSec MS        longest a journal write waits for others to share its fsync,",
                "                                      when the flag above does not flush earlier (2)",
                "  --journalBufferedWritesThreshold B  bytes that force a journal flush regardless of the wait (524288)",
                "  --journalAdaptiveGroupWrites B      group journal writes at all (true)",
                "  --journalSyncData B                 fsync the journal; false leaves durability to replication and",
                "                                      the page cache (true)",
                "  --set KEY=VALUE                     any other bookie setting (repeatable)",
                "  --help                              this text");
    }

    public static void main(String[] args) {
        int code;
        try {
            code = run(args);
        } catch (IllegalArgumentException e) {
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

    static int run(String[] args) throws Exception {
        int bookies = 3;
        int zkPort = 0;
        // Our default differs from BookKeeper's on purpose: the oracle batches its own adds (group commit), so a
        // bookie that also waits for a group only adds latency (stack notes: 2.7 ms -> 1.26 ms per E3/W2/A2 add).
        Map<String, String> journal = new LinkedHashMap<>();
        journal.put("journalFlushWhenQueueEmpty", "true");
        journal.put("journalMaxGroupWaitMSec", "2");
        journal.put("journalBufferedWritesThreshold", "524288");
        journal.put("journalAdaptiveGroupWrites", "true");
        journal.put("journalSyncData", "true");
        List<String[]> extra = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println(usage());
                return 0;
            }
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'");
            }
            String name = a.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else {
                value = null;
            }
            // Before taking the next argument as its value: a misspelt flag is "unknown", not "needs a value".
            if (!name.equals("bookies") && !name.equals("zk-port") && !name.equals("set")
                    && !journal.containsKey(name)) {
                throw new IllegalArgumentException("unknown flag --" + name);
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(a + " needs a value");
                }
                value = args[++i];
            }
            switch (name) {
                case "bookies" -> bookies = positive(name, value);
                case "zk-port" -> {
                    long port = number(name, value);
                    if (port < 0 || port > 65535) {
                        throw new IllegalArgumentException("--zk-port must be 0 to 65535, got " + value);
                    }
                    zkPort = (int) port;
                }
                case "set" -> {
                    int e = value.indexOf('=');
                    if (e <= 0) {
                        throw new IllegalArgumentException("--set needs KEY=VALUE, got '" + value + "'");
                    }
                    extra.add(new String[] {value.substring(0, e), value.substring(e + 1)});
                }
                default -> journal.put(name, check(name, value));
            }
        }
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

    private static long number(String name, String v) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a whole number, got '" + v + "'");
        }
    }

    private static int positive(String name, String v) {
        long n = number(name, v);
        if (n < 1 || n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--" + name + " must be at least 1, got " + v);
        }
        return (int) n;
    }

    private static String check(String name, String v) {
        if (name.startsWith("journalFlush") || name.equals("journalAdaptiveGroupWrites")
                || name.equals("journalSyncData")) {
            if (!v.equals("true") && !v.equals("false")) {
                throw new IllegalArgumentException("--" + name + " must be true or false, got '" + v + "'");
            }
        } else if (number(name, v) < 0) {
            throw new IllegalArgumentException("--" + name + " must not be negative, got " + v);
        }
        return v;
    }
}
