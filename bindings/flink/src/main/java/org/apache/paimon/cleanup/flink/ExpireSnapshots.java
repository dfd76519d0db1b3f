package org.apache.paimon.cleanup.flink;

import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.paimon.cleanup.PaimonCleanupException;
import org.apache.paimon.cleanup.Report;
import org.apache.paimon.cleanup.TableContext;

/**
 * Expires the old snapshots of a Paimon table branch as a Flink batch job of one task: the
 * library's single-process {@link TableContext#expireSnapshots} runs in a task manager (with its
 * credentials, under Flink's restart strategy; a rerun after a failure converges, as the
 * library's expiry is crash-safe), and main prints the report as the CLI's {@code
 * expire-snapshots} prints it. Snapshot expiry has no units yet, so this job does not run in
 * parallel; it lets a Flink-only platform schedule both cleanups the same way.
 *
 * <p>Exit status: 0 done, 1 the run failed, 2 bad arguments.
 */
public final class ExpireSnapshots {
    private ExpireSnapshots() {}

    /**
     * Entry point ({@code flink run -c org.apache.paimon.cleanup.flink.ExpireSnapshots}).
     *
     * @param argv the table and the options (see {@code --help})
     */
    public static void main(String[] argv) {
        int rc = run(argv);
        if (rc != 0) {
            System.exit(rc);
        }
    }

    /** The task: runs the expiry, returns the report's JSON document. */
    static final class ExpireTask extends RichMapFunction<String, String> {
        private static final long serialVersionUID = 1L;
        private final ExpireArgs args;

        ExpireTask(ExpireArgs args) {
            this.args = args;
        }

        @Override
        public String map(String table) {
            NativeLibrary.prepare(getRuntimeContext().getDistributedCache());
            Map<String, String> options = UnitTask.hostOptions(args.options);
            try (TableContext t = args.branch == null
                    ? new TableContext(table, options)
                    : TableContext.onBranch(table, args.branch, options)) {
                Report report = t.expireSnapshots(UnitTask.executor(), args.config(), null);
                return report.json();
            }
        }
    }

    /** Parses the arguments, runs the job, returns the exit status. */
    static int run(String[] argv) {
        long now = System.currentTimeMillis();
        ExpireArgs args;
        try {
            args = ExpireArgs.parse(argv, now);
            if (args.help) {
                System.out.println(ExpireArgs.USAGE);
                return 0;
            }
            NativeLibrary.prepareMain(args.nativeLibrary);
            args.resolve(now);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(ExpireArgs.USAGE);
            return 2;
        } catch (UnsatisfiedLinkError e) {
            return RemoveOrphanFiles.cannotLoad(e);
        }
        try {
            StreamExecutionEnvironment env = RemoveOrphanFiles.environment();
            if (args.nativeLibrary != null) {
                env.registerCachedFile(args.nativeLibrary, NativeLibrary.fileName());
            }
            List<String> out = env.fromData(Types.STRING, args.table)
                    .map(new ExpireTask(args))
                    .returns(Types.STRING)
                    .name("expire snapshots")
                    .setParallelism(1)
                    .executeAndCollect("paimon-cleanup expire-snapshots", 2);
            if (out.size() != 1) {
                System.err.println("error: the expiry task returned " + out.size() + " reports");
                return 1;
            }
            System.out.print(ReportText.renderExpiry(out.get(0), args.json));
            System.out.flush();
            return 0;
        } catch (UnsatisfiedLinkError e) {
            return RemoveOrphanFiles.cannotLoad(e);
        } catch (PaimonCleanupException e) {
            System.err.println("error: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            System.err.println("error: " + RemoveOrphanFiles.describe(e));
            return 1;
        }
    }
}
