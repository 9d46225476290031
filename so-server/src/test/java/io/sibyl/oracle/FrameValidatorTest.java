package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Frames found by OracleSurvivesRandomFramesTest. */
class FrameValidatorTest {
    /**
     * A row count of 2^60 or more overflowed {@code count * 8}: 2^61 passed as 0 rows, 2^60 + 2^20 threw an
     * IndexOutOfBoundsException from the skip (the frame leaked and the client read "internal error").
     */
    @ParameterizedTest
    @ValueSource(longs = {1L << 60, (1L << 60) + 1, (1L << 60) + (1L << 20), (1L << 61), (1L << 61) + 1,
            (1L << 62) + 3, Long.MAX_VALUE, 1L << 32, 1L << 31})
    void aCommitDeclaringMoreRowsThanAnyFrameHoldsIsMalformedNamingTheCount(long declared) {
        ByteBuf frame = Unpooled.buffer();
        frame.writeByte(Wire.COMMIT);
        Varints.writeUnsigned(frame, 1);
        Varints.writeUnsigned(frame, 42);
        Varints.writeUnsigned(frame, declared);
        frame.writeLong(7);
        ProtocolException e = assertThrows(ProtocolException.class, () -> FrameValidator.validate(frame));
        assertTrue(e.getMessage().contains("declares " + declared + " rows") && e.getMessage().contains("8 bytes"),
                e.getMessage());
        assertEquals(0, frame.readerIndex(), "the validator reads a duplicate");
    }
}
