package org.apache.paimon.cleanup;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The cross-binding scenario through the Java binding (bindings/SCENARIO.md).
 *
 * <pre>java -Djava.library.path=DIR -cp CLASSES org.apache.paimon.cleanup.Scenario TABLE-COPY</pre>
 *
 * Prints one canonical line per step ("SCENARIO step json"); exit status 0 when every step ran.
 */
public final class Scenario {
    private Scenario() {}

    private static ExpireConfig expireAll(boolean dryRun) {
        return new ExpireConfig().retainMin(1).olderThanMs(System.currentTimeMillis()).maxExpires(1000)
                .dryRun(dryRun);
    }

    private static void line(String step, String json) {
        System.out.println("SCENARIO " + step + " " + json);
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 1) {
            System.err.println("usage: Scenario <table-copy>");
            System.exit(2);
        }
        String table = args[0];
        try (Executor exec = new Executor(2);
                TableContext ctx = new TableContext(table)) {
            line("summary-before", ScenarioFormat.summary(ctx.summary(exec)));
            line("expire-dry-run", ScenarioFormat.report(ctx.expireSnapshots(exec, expireAll(true), null)));
            line("expire", ScenarioFormat.report(ctx.expireSnapshots(exec, expireAll(false), null)));
            line("orphan-dry-run",
                    ScenarioFormat.report(ctx.removeOrphanFiles(exec, new OrphanConfig().dryRun(true), null)));
            line("orphan", ScenarioFormat.report(ctx.removeOrphanFiles(exec, new OrphanConfig(), null)));
            Map<String, String> spec = new HashMap<String, String>();
            spec.put("f1", "20");
            List<Map<String, String>> specs = Collections.singletonList(spec);
            line("drop-partitions", ScenarioFormat.report(ctx.dropPartitions(exec, specs, null)));
            // Past the drop commit's millisecond: its snapshot is older than the next cut-off.
            Thread.sleep(5);
            line("expire-after-drop", ScenarioFormat.report(ctx.expireSnapshots(exec, expireAll(false), null)));
            line("summary-after", ScenarioFormat.summary(ctx.summary(exec)));
            try (TableContext missing = new TableContext(table + "/does-not-exist")) {
                missing.summary(exec);
                line("missing-table", "{\"status\":0}");
            } catch (PaimonCleanupException e) {
                line("missing-table", "{\"status\":" + e.status() + ",\"name\":\"" + e.statusName() + "\"}");
            }
        } catch (PaimonCleanupException e) {
            System.err.println("scenario failed: " + e.getMessage());
            System.exit(1);
        }
    }
}
