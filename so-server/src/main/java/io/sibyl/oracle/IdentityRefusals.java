package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;

/**
 * Says why a request or connection beyond a limit per identity is refused: to the client, naming the limit and the
 * setting to raise, and to the log, once per identity per minute with the count of those left out (a client flooding
 * BEGINs or connections cannot flood the log).
 */
final class IdentityRefusals {
    private static final Logger LOG = LoggerFactory.getLogger(IdentityRefusals.class);
    private static final long LOG_PERIOD_MILLIS = 60_000;

    private final RefusalLog log = new RefusalLog(LOG_PERIOD_MILLIS);

    /** Writes the reply to BEGIN {@code id} of {@code session}, whose identity holds {@code held} of {@code limit}. */
    void refuseBegin(ClientSession session, long id, long held, int limit, ByteBuf out) {
        String name = session.identity.name();
        long suppressed = log.admit("begin " + name);
        if (suppressed >= 0) {
            LOG.warn("refusing begins of {} (last from {}): its connections hold {} running transactions, the limit"
                    + " per identity (max.running.transactions.per.identity={}); {} more refusals of it in the last"
                    + " minute were not logged", name, session.channel.remoteAddress(), held, limit, suppressed);
        }
        Frames.writeError(out, id, Wire.ERR_OVERLOADED, "the connections of " + name + " hold " + held
                + " running transactions, the limit per identity (max.running.transactions.per.identity=" + limit
                + "): finish or roll back its open transactions, or raise the limit on the oracle");
    }

    /** Why a connection of {@code identity} from {@code peer} beyond {@code limit} is refused; logged as above. */
    String refuseConnection(ClientIdentity identity, SocketAddress peer, int limit) {
        long suppressed = log.admit("connection " + identity.name());
        if (suppressed >= 0) {
            LOG.warn("refused a connection of {} from {}: it has {} connections open, the limit per identity"
                    + " (max.connections.per.identity={}); {} more refusals of it in the last minute were not logged",
                    identity.name(), peer, limit, limit, suppressed);
        }
        return identity.name() + " has " + limit + " connections open, the limit per identity"
                + " (max.connections.per.identity=" + limit + "): this connection is refused; close idle connections"
                + " (one per client process is enough: its threads share it) or raise the limit on the oracle";
    }
}
