package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class VarintsTest {
    @Test
    void everyValueUpTo64BitsRoundTrips() {
        for (long v : new long[] {0, 1, 127, 128, 1L << 62, Long.MAX_VALUE, Long.MIN_VALUE, -1}) {
            ByteBuf b = Unpooled.buffer();
            Varints.writeUnsigned(b, v);
            assertEquals(Varints.unsignedSize(v), b.readableBytes());
            assertEquals(v, Varints.readUnsigned(b));
        }
    }

    /** Found by OracleSurvivesRandomFramesTest's overlong varints: ten bytes carrying bits above 63 were cut. */
    @Test
    void aTenByteVarintWithBitsAbove63IsRefusedNotTruncated() {
        ByteBuf b = Unpooled.buffer();
        for (int i = 0; i < 9; i++) {
            b.writeByte(i == 0 ? 0x85 : 0x80); // 5, then zeros
        }
        b.writeByte(0x02); // bit 64: the value does not fit; it used to read as 5
        ProtocolException e = assertThrows(ProtocolException.class, () -> Varints.readUnsigned(b));
        assertTrue(e.getMessage().contains("64 bits"), e.getMessage());
    }

    @Test
    void anElevenByteVarintIsRefused() {
        ByteBuf b = Unpooled.buffer();
        for (int i = 0; i < 10; i++) {
            b.writeByte(0x80);
        }
        b.writeByte(0);
        assertThrows(ProtocolException.class, () -> Varints.readUnsigned(b));
    }
}
