package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Varints;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The HELLO's aborted set (snapshot, added, removed) always decodes to the set, and handshakes do not sort the set:
 * a handshake storm once stopped every commit for minutes sorting a set of 295,000 entries per HELLO.
 */
class AbortedSetImageTest {

    @Test
    void everyHelloDecodesToTheSetWhateverTheChurnBetweenThem() {
        Random random = new Random(42);
        AbortedTransactions set = new AbortedTransactions();
        TreeSet<Long> model = new TreeSet<>();
        List<Long> cleanedUp = new ArrayList<>();
        long next = 1;
        long clock = 0;
        for (int round = 0; round < 400; round++) {
            int changes = random.nextInt(round % 50 == 0 ? 20_000 : 200);
            for (int i = 0; i < changes; i++) {
                if (model.isEmpty() || random.nextInt(3) > 0) {
                    next += 1 + random.nextInt(5);
                    set.add(next, 7);
                    model.add(next);
                } else {
                    Long ts = model.higher((long) random.nextInt((int) next));
                    if (ts != null && set.cleanedUp(ts, ++clock)) {
                        cleanedUp.add(ts);
                    }
                }
            }
            long watermark = ++clock;
            set.forgetReportedBefore(watermark, ts -> assertEquals(true, model.remove(ts), "forgot " + ts));
            ByteBuf hello = Unpooled.buffer();
            set.writeForHello(hello);
            assertEquals(new ArrayList<>(model), decode(hello), "round " + round);
            assertEquals(0, hello.readableBytes());
        }
    }

    @Test
    void aStormOfHandshakesEncodesALargeSetOnceAndSmallChangesDoNotEncodeItAgain() {
        AbortedTransactions set = new AbortedTransactions();
        for (long ts = 1; ts <= 300_000; ts++) {
            set.add(ts * 3, 7);
        }
        ByteBuf first = Unpooled.buffer();
        set.writeForHello(first);
        long encodings = set.imageEncodings();
        for (int hello = 0; hello < 4000; hello++) {
            if (hello % 100 == 0) {
                set.add(1_000_000 + hello, 7); // aborts go on during the storm
            }
            ByteBuf b = Unpooled.buffer();
            set.writeForHello(b);
            b.release();
        }
        assertEquals(encodings, set.imageEncodings(), "4000 handshakes and 40 aborts: no new encoding");
        ByteBuf last = Unpooled.buffer();
        set.writeForHello(last);
        assertEquals(300_040, decode(last).size());
    }

    /** The client's reading of the three lists: the snapshot and the added ones less the removed ones, ascending. */
    static List<Long> decode(ByteBuf in) {
        TreeSet<Long> out = new TreeSet<>(readList(in));
        out.addAll(readList(in));
        out.removeAll(readList(in));
        return new ArrayList<>(out);
    }

    private static List<Long> readList(ByteBuf in) {
        long n = Varints.readUnsigned(in);
        List<Long> out = new ArrayList<>();
        long previous = 0;
        for (long i = 0; i < n; i++) {
            previous += Varints.readUnsigned(in);
            out.add(previous);
        }
        return out;
    }
}
