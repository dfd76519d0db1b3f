package org.apache.paimon.cleanup.flink;

import java.util.Map;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.ExpiryUnits;
import org.apache.paimon.cleanup.PaimonCleanupException;
import org.apache.paimon.cleanup.Report;
import org.apache.paimon.cleanup.TableContext;

/**
 * Expires the old snapshots of a Paimon table branch with Flink, with the library's units ({@link
 * ExpiryUnits}); the result is the CLI's {@code expire-snapshots}:
 *
 * <ol>
 *   <li>main (the client, or the job manager in application mode): {@link ExpiryUnits#plan}
 *       (retention, the range to expire) gives the candidate units, each a slice of the expired
 *       range's delta and changelog manifest lists;
 *   <li>Flink batch job 1 ({@code --parallelism} tasks): the tasks read them and return the files
 *       they free; main merges the results ({@link ExpiryStage});
 *   <li>main: {@link ExpiryUnits#protect} reads every version that protects files and gives the
 *       protect units; job 2: the tasks read the protectors' manifests;
 *   <li>main: {@link ExpiryUnits#decide} builds and checks the deletion plan and gives delete
 *       units (data and changelog files; none in a dry run); job 3: the tasks delete;
 *   <li>main: {@link ExpiryUnits#finish} deletes the manifests, lists and snapshot files and
 *       writes the hint, in the crash-safe order, and prints the report as the CLI does.
 * </ol>
 *
 * <p>Exit status: 0 done, 1 the run failed (nothing is deleted before job 3; a failure in job 3
 * leaves every remaining version whole, the metadata of the expired snapshots stays, and a rerun
 * converges), 2 bad arguments.
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

    static void log(String message) {
        System.err.println("expire-snapshots: " + message);
    }

    /** Parses the arguments, runs the jobs, returns the exit status. */
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
            return run(env, args);
        } catch (UnsatisfiedLinkError e) {
            return RemoveOrphanFiles.cannotLoad(e);
        }
    }

    /** Runs the jobs on {@code env}; returns the exit status (0 or 1). */
    static int run(StreamExecutionEnvironment env, ExpireArgs args) {
        try {
            Executor exec = UnitTask.executor();
            log("native library " + NativeLibrary.describe());
            Map<String, String> mainOptions = UnitTask.hostOptions(args.options);
            try (TableContext table = args.branch == null
                    ? new TableContext(args.table, mainOptions)
                    : TableContext.onBranch(args.table, args.branch, mainOptions)) {
                long t0 = System.nanoTime();
                ExpiryUnits.Step plan = ExpiryUnits.plan(table, exec, args.config(), null);
                log(String.format("plan: %d candidate units (%d ms)", plan.units().size(), ms(t0)));
                byte[] candidates =
                        ExpiryStage.run(env, "candidates", plan.units(), args.parallelism, args.options);

                long t1 = System.nanoTime();
                ExpiryUnits.Step protect = ExpiryUnits.protect(table, exec, null, plan.state(), candidates);
                log(String.format("protect: %d protect units (%d ms)", protect.units().size(), ms(t1)));
                byte[] protectedKeys =
                        ExpiryStage.run(env, "protect", protect.units(), args.parallelism, args.options);

                long t2 = System.nanoTime();
                ExpiryUnits.Step decision =
                        ExpiryUnits.decide(table, exec, null, protect.state(), candidates, protectedKeys);
                candidates = null;
                log(String.format("decide: %d delete units (%d ms)", decision.units().size(), ms(t2)));
                byte[] deletes =
                        ExpiryStage.run(env, "delete", decision.units(), args.parallelism, args.options);

                Report report = ExpiryUnits.finish(table, exec, null, decision.state(), deletes);
                System.out.print(ReportText.renderExpiry(report.json(), args.json));
                System.out.flush();
                return 0;
            }
        } catch (PaimonCleanupException e) {
            System.err.println("error: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            // A failed Flink job (a task failed more often than the restart strategy allows).
            System.err.println("error: " + RemoveOrphanFiles.describe(e));
            return 1;
        }
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000L;
    }
}
