package io.sibyl.protocol;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Message type codes are the wire contract: existing codes never move, new ones never reuse a code. */
class MessageTypesTest {

    @Test
    void laterMessagesAddNewCodesAndLeaveTheVersionTwoCodesAlone() {
        byte[] requests = {Wire.BEGIN, Wire.COMMIT, Wire.ABORT, Wire.CLEANED_UP, Wire.QUERY, Wire.FINISH};
        for (int i = 0; i < requests.length; i++) {
            assertEquals(i + 1, requests[i], "version 2 request codes are 1..6");
        }
        byte[] replies = {Wire.HELLO, Wire.STARTED, Wire.COMMITTED, Wire.ABORTED, Wire.ACK, Wire.STATUS, Wire.ERROR,
                Wire.DELTA};
        for (int i = 0; i < replies.length; i++) {
            assertEquals(32 + i, replies[i], "version 2 reply codes are 32..39");
        }
        assertEquals(7, Wire.WATERMARK_QUERY);
        assertEquals(40, Wire.WATERMARK);
        // Version 3 changed only the HELLO layout (the reader grace period); the codes stayed. Version 4 added one.
        assertEquals(8, Wire.RANGE_CLEANED_UP);
        assertEquals(9, Wire.AUTHENTICATE);
        assertEquals(10, Wire.COMMIT_CERTIFIED);
        assertEquals(4, Wire.ABORT_READ_CONFLICT);
        // Admin requests, added to version 6 without changing it (an older oracle refuses them as malformed).
        assertEquals(11, Wire.ORACLE_STATUS_QUERY);
        assertEquals(12, Wire.RUNNING_QUERY);
        assertEquals(41, Wire.ORACLE_STATUS);
        assertEquals(42, Wire.RUNNING_LIST);
        assertEquals(6, Wire.VERSION, "HELLO carries a nonce for AUTHENTICATE since version 6");
        Set<Byte> all = new HashSet<>();
        for (byte b : requests) {
            all.add(b);
        }
        for (byte b : replies) {
            all.add(b);
        }
        assertTrue(all.add(Wire.WATERMARK_QUERY) && all.add(Wire.WATERMARK) && all.add(Wire.RANGE_CLEANED_UP)
                        && all.add(Wire.AUTHENTICATE) && all.add(Wire.COMMIT_CERTIFIED)
                        && all.add(Wire.ORACLE_STATUS_QUERY) && all.add(Wire.RUNNING_QUERY)
                        && all.add(Wire.ORACLE_STATUS) && all.add(Wire.RUNNING_LIST),
                "no code is used twice");
    }
}
