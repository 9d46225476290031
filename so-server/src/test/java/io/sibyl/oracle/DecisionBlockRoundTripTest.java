package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionBlockWriter;
import io.sibyl.protocol.DecisionVisitor;
import io.sibyl.protocol.ProtocolException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** write -> seal -> read visits the same records, for hand-written blocks and for blocks the oracle seals. */
class DecisionBlockRoundTripTest {

    /** Every record as text, plus "|" at each block end. */
    static final class Recorder implements DecisionVisitor {
        final List<String> records = new ArrayList<>();

        @Override
        public void onCommit(long startTs, long commitTs) {
            records.add("C" + startTs + ">" + commitTs);
        }

        @Override
        public void onAbort(long startTs) {
            records.add("A" + startTs);
        }

        @Override
        public void onForget(long startTs) {
            records.add("F" + startTs);
        }

        @Override
        public void onTmax(long tMax) {
            records.add("T" + tMax);
        }

        @Override
        public void onReserve(long limit) {
            records.add("R" + limit);
        }

        @Override
        public void onAbortRange(long from, long to) {
            records.add("X" + from + "-" + to);
        }

        @Override
        public void onForgetRange(long from, long to) {
            records.add("Y" + from + "-" + to);
        }

        @Override
        public void onBlockEnd() {
            records.add("|");
        }
    }

    private static List<String> read(byte[]... blocks) {
        Recorder r = new Recorder();
        DecisionBlockReader.readAll(Unpooled.wrappedBuffer(blocks), r);
        return r.records;
    }

    @Test
    void handWrittenBlockReadsBackRecordForRecordIncludingBackwardDeltas() {
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(1000);
        w.reserve(2_000_000);
        w.commit(995, 1001);
        w.abort(3); // far below the previous record: a negative delta
        w.forget(2);
        w.tMax(999);
        w.commit(1, DecisionBlockWriter.MAX_TIMESTAMP - 1); // the widest delta the oracle can produce
        w.abort(DecisionBlockWriter.MAX_TIMESTAMP - 1);
        w.forgetRange(10, 990);
        assertEquals(8, w.records());
        byte[] block = w.seal();
        assertEquals(block.length, w.encodedSize());
        assertEquals(List.of("R2000000", "C995>1001", "A3", "F2", "T999", "C1>" + (DecisionBlockWriter.MAX_TIMESTAMP - 1),
                "A" + (DecisionBlockWriter.MAX_TIMESTAMP - 1), "Y10-990", "|"), read(block));
    }

    @Test
    void emptyBlockReadsAsJustABlockEnd() {
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(5);
        assertTrue(w.isEmpty());
        assertEquals(List.of("|"), read(w.seal()));
    }

    @Test
    void writerIsReusableAndConcatenatedBlocksReadInOrder() {
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(10);
        w.commit(8, 11);
        byte[] first = w.seal();
        w.start(11);
        w.abort(9);
        w.commit(12, 13);
        byte[] second = w.seal();
        assertEquals(List.of("C8>11", "|", "A9", "C12>13", "|"), read(first, second));
        assertEquals(List.of("A9", "C12>13", "|"), read(second), "a block decodes on its own: deltas restart at base");
    }

    @Test
    void randomBlocksRoundTrip() {
        Random random = new Random(5);
        DecisionBlockWriter w = new DecisionBlockWriter();
        for (int block = 0; block < 300; block++) {
            long base = 1 + (random.nextLong() >>> 10) % (DecisionBlockWriter.MAX_TIMESTAMP / 2);
            w.start(base);
            List<String> expected = new ArrayList<>();
            int n = random.nextInt(200);
            for (int i = 0; i < n; i++) {
                long ts = 1 + (random.nextBoolean() ? base + random.nextInt(1_000_000) - 500_000
                        : (random.nextLong() >>> 10) % (DecisionBlockWriter.MAX_TIMESTAMP - 2));
                ts = Math.max(1, Math.min(ts, DecisionBlockWriter.MAX_TIMESTAMP - 2));
                switch (random.nextInt(6)) {
                    case 0 -> {
                        long commit = ts + 1 + random.nextInt(1000);
                        long start = ts;
                        w.commit(start, commit);
                        expected.add("C" + start + ">" + commit);
                    }
                    case 1 -> {
                        w.abort(ts);
                        expected.add("A" + ts);
                    }
                    case 2 -> {
                        w.forget(ts);
                        expected.add("F" + ts);
                    }
                    case 3 -> {
                        w.tMax(ts);
                        expected.add("T" + ts);
                    }
                    case 4 -> {
                        long to = ts + 1 + random.nextInt(2_000_000);
                        w.abortRange(ts, to);
                        expected.add("X" + ts + "-" + to);
                    }
                    default -> {
                        w.reserve(ts);
                        expected.add("R" + ts);
                    }
                }
            }
            expected.add("|");
            byte[] sealed = w.seal();
            assertEquals(sealed.length, w.encodedSize());
            assertEquals(expected, read(sealed), "block " + block);
        }
    }

    @Test
    void abortRangeReadsBackAndRejectsEmptyRanges() {
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(1000);
        w.abortRange(100, 1000);
        w.tMax(2000);
        w.abortRange(1, DecisionBlockWriter.MAX_TIMESTAMP - 1);
        assertEquals(List.of("X100-1000", "T2000", "X1-" + (DecisionBlockWriter.MAX_TIMESTAMP - 1), "|"),
                read(w.seal()));
        assertThrows(IllegalArgumentException.class, () -> w.abortRange(5, 5));
        assertThrows(IllegalArgumentException.class, () -> w.abortRange(6, 5));
        // A width of 0, or one reaching below timestamp 0, is malformed.
        for (long width : new long[] {0, 1001}) {
            ByteBuf body = Unpooled.buffer();
            io.sibyl.protocol.Varints.writeUnsigned(body, 0); // base
            io.sibyl.protocol.Varints.writeUnsigned(body, ((1000L << 1) << 3) | 5); // ts 1000, ABORT_RANGE
            io.sibyl.protocol.Varints.writeUnsigned(body, width);
            ByteBuf block = Unpooled.buffer();
            io.sibyl.protocol.Varints.writeUnsigned(block, body.readableBytes());
            block.writeBytes(body);
            assertThrows(ProtocolException.class, () -> DecisionBlockReader.readAll(block, new Recorder()),
                    "width " + width);
        }
    }

    @Test
    void truncatedBlockIsRejected() {
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(100);
        w.commit(50, 150);
        w.abort(60);
        byte[] sealed = w.seal();
        for (int cut = 1; cut < sealed.length; cut++) {
            ByteBuf partial = Unpooled.wrappedBuffer(sealed, 0, cut);
            assertThrows(ProtocolException.class, () -> DecisionBlockReader.readAll(partial, new Recorder()),
                    "cut at " + cut);
        }
    }

    @Test
    void blocksSealedByTheOracleReadBackAsTheDecisionsItMade() {
        OracleState state = new OracleState(OracleConfig.defaults().withCapacities(64, 4, 16));
        assertNull(state.sealBlock(), "nothing decided yet");
        List<String> expected = new ArrayList<>();
        List<byte[]> blocks = new ArrayList<>();
        long r = state.begin(1);
        expected.add("R" + (r + OracleConfig.defaults().timestampReservationBlock())); // first timestamp reserves
        long a = state.begin(1);
        long b = state.begin(2);
        long ca = state.commit(a, new long[] {1, 2}, 2);
        expected.add("C" + a + ">" + ca);
        assertEquals(OracleState.CONFLICT, state.commit(b, new long[] {2}, 1));
        expected.add("A" + b);
        expected.add("|");
        blocks.add(state.sealBlock());
        assertNull(state.sealBlock(), "an idle oracle seals nothing");

        assertTrue(state.cleanedUp(b));
        state.finish(r); // r started before the clean-up report: b can be forgotten now
        expected.add("F" + b);
        expected.add("|");
        blocks.add(state.sealBlock());

        long[] committed = new long[5];
        for (int i = 0; i < 5; i++) {
            long t = state.begin(3);
            committed[i] = state.commit(t, new long[] {100 + i}, 1);
            expected.add("C" + t + ">" + committed[i]);
        }
        long reader = state.begin(3);
        // The 5th commit overflowed the 4-entry window: T_max rose to the first commit, announced at the seal.
        assertEquals(committed[0], state.tMax());
        expected.add("T" + committed[0]);
        expected.add("|");
        blocks.add(state.sealBlock());
        assertEquals(expected, read(blocks.toArray(new byte[0][])));
        state.finish(reader);
    }
}
