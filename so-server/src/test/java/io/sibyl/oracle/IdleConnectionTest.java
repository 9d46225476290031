package io.sibyl.oracle;

import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.io.DataOutputStream;
import java.net.Socket;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Abandoned connections do not keep their places under max.connections for ever: a client connection that sends
 * nothing for idle.timeout.ms while holding no transaction is told why and closed; one holding a transaction, and the
 * standby's watch, stay.
 */
class IdleConnectionTest {

    @Test
    void anIdleConnectionHoldingNothingIsClosedWhileOneHoldingATransactionAndAWatchStay() throws Exception {
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8).withIdleTimeout(1000));
             WireSocket idle = WireSocket.connect(oracle.port());
             WireSocket holding = WireSocket.connect(oracle.port());
             Socket watch = new Socket("127.0.0.1", oracle.port())) {
            idle.handshake(Wire.VERSION);
            holding.handshake(Wire.VERSION);
            holding.send(ForeignTransactionRequestsTest.request(Wire.BEGIN, 1));
            long start = holding.expectReply(1).value();
            DataOutputStream w = new DataOutputStream(watch.getOutputStream());
            w.writeInt(7);
            w.writeInt(Wire.MAGIC);
            w.writeShort(Wire.VERSION);
            w.writeByte(Wire.ROLE_WATCH);
            w.flush();

            List<Msg> untilClosed = idle.readUntilClosed(); // heartbeats, then the reason, then the end
            Msg reason = untilClosed.stream().filter(m -> m.type() == Wire.ERROR).findFirst().orElseThrow();
            assertEquals(Wire.ERR_OVERLOADED, reason.code());
            assertTrue(reason.text().contains("idle.timeout.ms=1000"), reason.text());

            Thread.sleep(1500); // past the timeout for the other two as well
            holding.send(ForeignTransactionRequestsTest.request(Wire.QUERY, 2, start));
            assertEquals(Wire.STATUS_RUNNING, holding.expectReply(2).value(), "the holder is still served");
            assertEquals(2, oracle.stats().connections(), "the holder and the watch are still open");
        }
    }
}
