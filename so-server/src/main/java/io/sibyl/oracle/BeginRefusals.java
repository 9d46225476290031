package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers a BEGIN the oracle refused ({@link Decision#OWNER_OVERLOADED} and the other limits): the client is told which
 * limit it met and what to do, and the log names a leaking client once. Refusals only: a BEGIN that starts a
 * transaction never comes here.
 */
final class BeginRefusals {
    private static final Logger LOG = LoggerFactory.getLogger(BeginRefusals.class);

    private final OracleState state;
    /** Refuses BEGINs beyond max.running.transactions.per.identity, logging each identity once a minute. */
    private final IdentityRefusals identityRefusals = new IdentityRefusals();

    BeginRefusals(OracleState state) {
        this.state = state;
    }

    /** Writes to {@code out} the reply to BEGIN {@code id} of {@code session}, refused as {@code decision} says. */
    void refuse(Decision decision, ClientSession session, long id, ByteBuf out) {
        switch (decision) {
            case OWNER_OVERLOADED -> {
                if (!session.warnedQuota) {
                    // Names the leaking client once; RefusedBegins counts every refusal.
                    session.warnedQuota = true;
                    LOG.warn("refusing begins from {}: it holds {} running transactions, the limit per connection"
                            + " (max.running.transactions.per.connection={}); it leaks transactions or runs more at"
                            + " once than the limit allows", session.channel.remoteAddress(),
                            state.running().liveOf(session.id), state.running().capacityPerOwner());
                }
                Frames.writeError(out, id, Wire.ERR_OVERLOADED, "this connection has "
                        + state.running().liveOf(session.id) + " transactions running, its limit"
                        + " (max.running.transactions.per.connection=" + state.running().capacityPerOwner() + "):"
                        + " finish or roll back its open transactions, or raise the limit on the oracle");
            }
            case IDENTITY_OVERLOADED -> identityRefusals.refuseBegin(session, id,
                    state.running().liveOfIdentityOf(session.id), state.running().capacityPerIdentity(), out);
            case ABORTED_SET_FULL -> {
                if (!session.warnedQuota) {
                    session.warnedQuota = true;
                    LOG.warn("refusing begins: {} aborted transactions wait for their clean-up"
                            + " (max.aborted.transactions={}); run bin/sibyl-sweep", state.aborted().size(),
                            state.aborted().limit());
                }
                Frames.writeError(out, id, Wire.ERR_OVERLOADED, state.aborted().size() + " aborted transactions"
                        + " wait for their clean-up, the limit (max.aborted.transactions=" + state.aborted().limit()
                        + "): run bin/sibyl-sweep with the admin secret to delete the versions of lost clients'"
                        + " transactions, or raise the limit on the oracle");
            }
            // Counted like any reply, so a frame of refused BEGINs still leaves in blocks of max.block.records
            // replies and a client that reads nothing is noticed after one of them.
            case OVERLOADED -> Frames.writeError(out, id, Wire.ERR_OVERLOADED, state.running().live() + " transactions"
                    + " are running, the limit (max.running.transactions=" + state.running().capacity() + "): finish"
                    + " or roll back open transactions, or raise the limit on the oracle");
            default -> throw new IllegalArgumentException("a begin is never refused as " + decision);
        }
    }
}
