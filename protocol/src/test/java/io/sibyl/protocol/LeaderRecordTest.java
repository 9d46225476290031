package io.sibyl.protocol;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LeaderRecordTest {

    @Test
    void leaderRecordSurvivesEncodeAndDecode() {
        LeaderRecord r = new LeaderRecord(7, "oracle-1.example", 24680, "oracle-1/123/abcd");
        LeaderRecord back = LeaderRecord.decode(r.encode());
        assertEquals(r, back);
        assertEquals("oracle-1.example:24680", back.address());
    }

    @Test
    void ipv6HostKeepsItsColons() {
        LeaderRecord r = LeaderRecord.decode(new LeaderRecord(1, "::1", 5, "").encode());
        assertEquals("::1", r.host());
        assertEquals(5, r.port());
    }

    @Test
    void foreignContentIsRejectedWithTheExpectedFormat() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LeaderRecord.decode("hello".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("sibyl-leader 1"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LeaderRecord.decode(
                "sibyl-leader 1\nepoch x\naddress h:1\n".getBytes(StandardCharsets.UTF_8)));
        assertThrows(IllegalArgumentException.class, () -> LeaderRecord.decode(
                "sibyl-leader 1\nepoch 1\naddress nohostport\n".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aZnodeWithoutDataIsRejectedAsHoldingNoData() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LeaderRecord.decode(null));
        assertTrue(e.getMessage().contains("no data"), e.getMessage());
    }
}
