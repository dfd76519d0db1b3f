package org.apache.paimon.cleanup.flink;

import java.util.Map;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.paimon.cleanup.Executor;
import org.apache.paimon.cleanup.OrphanConfig;
import org.apache.paimon.cleanup.OrphanUnits;
import org.apache.paimon.cleanup.PaimonCleanupException;
import org.apache.paimon.cleanup.Report;
import org.apache.paimon.cleanup.TableContext;

/**
 * Removes the orphan files of a Paimon table (every branch) with Flink, with the library's units
 * ({@link OrphanUnits}):
 *
 * <ol>
 *   <li>main (the client, or the job manager in application mode): {@link OrphanUnits#plan}
 *       (reads the versions and manifest lists, checks the cut-off) gives units: "list these
 *       directories", "read these manifests";
 *   <li>Flink batch job 1 ({@code --parallelism} tasks): the tasks execute the units and merge
 *       their partial results; main merges the tasks' results ({@link Stage});
 *   <li>main: {@link OrphanUnits#decide} applies every safety rule of the single-process run
 *       (cut-off, unreadable metadata aborts, versions appearing meanwhile, the path guard) and
 *       returns delete units (none in a dry run);
 *   <li>Flink batch job 2: the tasks execute the delete units (each file is checked again before
 *       it is deleted);
 *   <li>main: {@link OrphanUnits#finish} removes emptied directories and builds the report,
 *       printed as the CLI's {@code remove-orphan-files} prints it (text, or {@code --json}).
 * </ol>
 *
 * <p>Run with {@code flink run} on a session cluster or as an application, or from a plain
 * {@code java} command, which runs both jobs in a local MiniCluster. Exit status: 0 done (as the
 * CLI, also when some deletions failed: they are in the report and a later run retries them), 1
 * the run failed (nothing was deleted if it failed before job 2; a failure in job 2 leaves only
 * orphans behind, and a rerun converges), 2 bad arguments. See bindings/flink/README.md.
 */
public final class RemoveOrphanFiles {
    private RemoveOrphanFiles() {}

    /**
     * Entry point ({@code flink run -c org.apache.paimon.cleanup.flink.RemoveOrphanFiles}).
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
        System.err.println("remove-orphan-files: " + message);
    }

    /**
     * The execution environment in batch mode: the cluster's under {@code flink run}, else a local
     * MiniCluster configured by {@code FLINK_CONF_DIR}'s {@code config.yaml} (if any).
     */
    static StreamExecutionEnvironment environment() {
        Configuration conf = UnitTask.flinkConfiguration();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        return env;
    }

    /** Parses the arguments, runs the job, returns the exit status. */
    static int run(String[] argv) {
        long now = System.currentTimeMillis();
        JobArgs args;
        Long cutoff;
        try {
            args = JobArgs.parse(argv, now);
            if (args.help) {
                System.out.println(JobArgs.USAGE);
                return 0;
            }
            NativeLibrary.prepareMain(args.nativeLibrary);
            cutoff = args.cutoffMs(now);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(JobArgs.USAGE);
            return 2;
        } catch (UnsatisfiedLinkError e) {
            return cannotLoad(e);
        }
        try {
            StreamExecutionEnvironment env = environment();
            if (args.nativeLibrary != null) {
                env.registerCachedFile(args.nativeLibrary, NativeLibrary.fileName());
            }
            return run(env, args, cutoff);
        } catch (UnsatisfiedLinkError e) {
            return cannotLoad(e);
        }
    }

    static int cannotLoad(UnsatisfiedLinkError e) {
        System.err.println("error: cannot load the native library (" + NativeLibrary.describe()
                + "): " + e.getMessage() + "; pass --native-library <dir>/" + NativeLibrary.fileName()
                + " (see bindings/flink/README.md)");
        return 1;
    }

    /** Runs the job on {@code env}; returns the exit status (0 or 1). */
    static int run(StreamExecutionEnvironment env, JobArgs args, Long cutoff) {
        try {
            Executor exec = UnitTask.executor();
            log("native library " + NativeLibrary.describe());
            OrphanConfig config = new OrphanConfig()
                    .dryRun(args.dryRun)
                    .noWritersRunning(args.noWritersRunning)
                    .externalRootsOwned(args.externalRootsOwned);
            if (cutoff != null) {
                config.olderThanMs(cutoff.longValue());
            }
            Map<String, String> mainOptions = UnitTask.hostOptions(args.options);
            try (TableContext table = new TableContext(args.table, mainOptions)) {
                long t0 = System.nanoTime();
                OrphanUnits.Plan plan = OrphanUnits.plan(table, exec, config, null);
                log(String.format("plan: %d units (%d ms)", plan.units().size(), ms(t0)));

                long t1 = System.nanoTime();
                byte[] merged = Stage.run(env, "plan", plan.units(), args.parallelism, args.options);
                log(String.format("plan units executed and merged: %d bytes (%d ms)",
                        merged.length, ms(t1)));

                long t2 = System.nanoTime();
                OrphanUnits.Decision decision =
                        OrphanUnits.decide(table, exec, config, null, plan.state(), merged);
                merged = null;
                log(String.format("decide: %d delete units (%d ms)",
                        decision.deleteUnits().size(), ms(t2)));

                long t3 = System.nanoTime();
                byte[] deletes = Stage.run(env, "delete", decision.deleteUnits(), args.parallelism,
                        args.options);
                log(String.format("delete units executed and merged (%d ms)", ms(t3)));

                Report report = OrphanUnits.finish(table, exec, null, decision.decision(), deletes);
                System.out.print(ReportText.render(report.json(), args.json));
                System.out.flush();
                return 0;
            }
        } catch (PaimonCleanupException e) {
            System.err.println("error: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            // A failed Flink job (a task failed more often than the restart strategy allows).
            System.err.println("error: " + describe(e));
            return 1;
        }
    }

    /** The exception and its causes on one line (Flink wraps a task's failure several times). */
    static String describe(Throwable e) {
        StringBuilder b = new StringBuilder(String.valueOf(e));
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            b.append("; caused by ").append(c);
        }
        return b.toString();
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000L;
    }
}
