package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ABORT, FINISH, CLEANED_UP and RANGE_CLEANED_UP: the requests that end a transaction or report its versions deleted,
 * each allowed only to whom the transaction belongs. A client acts on its own transactions (any of its connections);
 * the admin role (the sweeper) on anyone's. Anything else is refused: a stranger's abort would fail every commit, and
 * a false clean-up report would make versions still in the data store read as committed.
 */
final class TransactionEndings {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionEndings.class);

    private final OracleState state;

    TransactionEndings(OracleState state) {
        this.state = state;
    }

    /**
     * ABORT: a connection aborts its own transactions, and those its client began on connections it lost (same
     * identity token); the admin role aborts any.
     */
    void abort(ClientSession session, long id, long ts, ByteBuf out) {
        if (!state.begunByAnother(ts, session.id)) {
            state.abort(ts);
        } else if (session.admin || state.owners().isClientOf(ts, session.identity.token())) {
            state.abortForOwner(ts); // decided now, but still held under the watermark for its owner
        } else {
            SessionAuthentication.forbidden(session, id, "transaction " + ts + " was begun by another client: only"
                    + " that client, or the admin role, may abort it", out);
            return;
        }
        ack(out, id);
    }

    /**
     * FINISH: a transaction that wrote nothing ends. Another connection's FINISH would drop a running transaction
     * without an abort record: its owner's commit would then fail as unknown, its snapshot would lose the low
     * watermark's protection, and versions it wrote would read as committed once T_max passed it. Ignored (a FINISH
     * has no reply), and said once per connection.
     */
    void finish(ClientSession session, long ts) {
        if (!state.begunByAnother(ts, session.id)) {
            state.finish(ts);
        } else if (!session.warnedForeignFinish) {
            session.warnedForeignFinish = true;
            LOG.warn("ignoring FINISH of transaction {} from {}: it was begun on another connection; only that"
                    + " connection may finish it", ts, session.channel.remoteAddress());
        }
    }

    /** CLEANED_UP: the versions {@code ts} wrote are deleted; a lost client's transaction needs the admin role. */
    void cleanedUp(ClientSession session, long id, long ts, ByteBuf out) {
        if (session.admin || state.owners().mayReportCleanedUp(ts, session.identity.token())) {
            state.cleanedUp(ts);
            ack(out, id);
        } else {
            SessionAuthentication.forbidden(session, id, "transaction " + ts + " was aborted on a connection of"
                    + " another client (one that went away, or one an earlier oracle knew): only the admin role may"
                    + " report its clean-up; bin/sibyl-sweep does, with the admin secret (docs/operations.md,"
                    + " Security)", out);
        }
    }

    /** RANGE_CLEANED_UP: the versions of the aborted range {@code (from, to]} are deleted; admin role only. */
    void rangeCleanedUp(ClientSession session, long id, long from, long to, ByteBuf out) {
        if (session.admin) {
            state.rangeCleanedUp(from, to);
            ack(out, id);
        } else {
            SessionAuthentication.forbidden(session, id, "only the admin role may report the aborted range (" + from
                    + ", " + to + "] cleaned up; bin/sibyl-sweep does, with the admin secret (docs/operations.md,"
                    + " Security)", out);
        }
    }

    private static void ack(ByteBuf out, long id) {
        out.writeByte(Wire.ACK);
        Varints.writeUnsigned(out, id);
    }
}
