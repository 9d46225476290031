package io.sibyl.bench;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ticker that releases paced transactions: never early, in schedule order, and every one of them. */
class PacingTickerTest {

    @Test
    void everyTransactionStartsAtOrAfterItsScheduledTimeAndInScheduleOrder() throws Exception {
        EventLoopGroup loop = new DefaultEventLoopGroup(1);
        try {
            int n = 2000;
            long[] scheduled = new long[n];
            long[] ran = new long[n];
            List<Integer> order = new ArrayList<>(); // touched on the loop's thread only
            CountDownLatch all = new CountDownLatch(n);
            PacingTicker ticker = new PacingTicker(loop, () -> false);
            long t0 = System.nanoTime() + 5_000_000L;
            loop.execute(() -> {
                for (int i = 0; i < n; i++) {
                    int id = i;
                    scheduled[i] = t0 + i * 10_000L; // 100,000 per second
                    ticker.await(scheduled[i], () -> {
                        ran[id] = System.nanoTime();
                        order.add(id);
                        all.countDown();
                    });
                }
            });
            assertTrue(all.await(30, TimeUnit.SECONDS), "not every paced transaction was released");
            for (int i = 0; i < n; i++) {
                assertTrue(ran[i] >= scheduled[i], "transaction " + i + " started "
                        + (scheduled[i] - ran[i]) + " ns before its scheduled time");
                assertEquals(i, order.get(i), "released out of schedule order");
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aStoppingLoadReleasesNothingMore() throws Exception {
        EventLoopGroup loop = new DefaultEventLoopGroup(1);
        try {
            boolean[] stopping = {false};
            int[] released = {0};
            PacingTicker ticker = new PacingTicker(loop, () -> stopping[0]);
            CountDownLatch queued = new CountDownLatch(1);
            loop.execute(() -> {
                long soon = System.nanoTime() + 100_000_000L; // due well before we look
                ticker.await(soon, () -> released[0]++);
                stopping[0] = true;
                queued.countDown();
            });
            assertTrue(queued.await(5, TimeUnit.SECONDS));
            Thread.sleep(400); // past its time, many ticks later
            CountDownLatch checked = new CountDownLatch(1);
            int[] seen = new int[1];
            loop.execute(() -> {
                seen[0] = released[0];
                checked.countDown();
            });
            assertTrue(checked.await(5, TimeUnit.SECONDS));
            assertEquals(0, seen[0]);
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
