package io.sibyl.bench.fuzz;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** What the good clients and the sweeper did, and every answer of the oracle that was wrong for them. */
final class GoodOutcomes {
    private static final int KEPT_TEXTS = 20;

    final LongAdder transactions = new LongAdder();
    final LongAdder commits = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder tooOld = new LongAdder();
    final LongAdder ownAborts = new LongAdder();
    final LongAdder readOnly = new LongAdder();
    final LongAdder queriesChecked = new LongAdder();
    /** BEGINs refused for a limit (ERROR code 7): allowed by the protocol, but a sign the attackers locked clients out. */
    final LongAdder refusedBegins = new LongAdder();
    /** Aborted transactions the sweeper reported cleaned up with the admin role. */
    final LongAdder swept = new LongAdder();
    private final AtomicLong wrong = new AtomicLong();
    private final ConcurrentLinkedQueue<String> wrongTexts = new ConcurrentLinkedQueue<>();

    /** The oracle answered a good client wrongly (or not at all); the run fails. */
    void wrongAnswer(String what) {
        if (wrong.incrementAndGet() <= KEPT_TEXTS) {
            wrongTexts.add(what);
        }
    }

    long wrongAnswers() {
        return wrong.get();
    }

    List<String> wrongAnswerTexts() {
        return new ArrayList<>(wrongTexts);
    }
}
