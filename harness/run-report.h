/* What `airlock run` and `airlock gate` report for machines
 * (docs/json.md): the JSON Lines of --json, the JUnit XML of --junit and
 * the GitHub Actions annotations of a gate under GITHUB_ACTIONS=true. */
#pragma once

#include "harness.h"

#include <stdio.h>

/* One invocation of run or gate: what was asked, what each arch came to,
 * and every error printed, for the reports written once every arch has
 * ended. */
typedef struct {
  const char *command;                        /* "airlock run" or "airlock gate": message prefix */
  gboolean gate;
  gboolean json;                              /* --json: stdout holds JSON Lines only */
  FILE *text;                                 /* where human text goes: stdout, stderr under --json */
  gboolean arches_known;                      /* @arches parsed */
  gboolean ran;                               /* every input checked, the runs begun */
  gboolean arches[AIRLOCK_N_ARCHES];          /* those asked for */
  AirlockResult *results[AIRLOCK_N_ARCHES];   /* owned; NULL: the arch never reached a result */
  char *arch_errors[AIRLOCK_N_ARCHES];        /* why an arch has no result */
  GPtrArray *errors;                          /* char *: every error message, in order */
  gboolean pool;                              /* runs spread over several hypervisors */
} RunReport;

void run_report_init (RunReport *r, gboolean gate);
void run_report_clear (RunReport *r);

/* Prints "airlock gate: MESSAGE" (or run) on stderr and keeps MESSAGE for
 * the summary; with @arch >= 0 it is also that arch's error. */
void run_report_error (RunReport *r, int arch, const char *format, ...) G_GNUC_PRINTF (3, 4);

/* "pass", "fail" or "inconclusive" for one arch of a gate: no result, or
 * a result whose bundle could not be written, is inconclusive. */
const char *run_report_arch_verdict (const RunReport *r, AirlockArch arch);

/* "completed", "timeout", "error", "wall-time limit" or "unknown": how
 * the trailer says the run ended.  Static string. */
const char *run_report_end_reason (guint32 reason);

/* The JSON lines of one arch's finished run, on stdout: its "image", each
 * "event", each "network" exchange, its "output" streams and its "run". */
void run_report_json_run (AirlockArch arch, AirlockResult *result);
/* One "verdict" line per arch asked for (gate). */
void run_report_json_verdicts (const RunReport *r);
/* "pass", "fail" or "inconclusive" over every arch asked (inconclusive
 * beats fail beats pass); NULL for a run, or a gate that never ran. */
const char *run_report_overall_verdict (const RunReport *r);

/* The last line, of @type "summary" (or "image-summary" for one image of
 * a gate over several): the exit status, the overall verdict, each arch. */
void run_report_json_summary (const RunReport *r, const char *type, int exit_status);

/* The gate as JUnit XML in @path: one testcase per arch, a failure listing
 * the offending attempts and reasons, an inconclusive arch as an error.
 * FALSE with @error naming the file. */
gboolean run_report_write_junit (const RunReport *r, const char *path, GError **error);
/* The gate's <testsuite> (named by the image's reference) appended to
 * @out, its counts added to @tests, @failures and @errors. */
void run_report_junit_suite (const RunReport *r, GString *out, guint *tests, guint *failures,
                             guint *errors);
/* The JUnit document around @suites (run_report_junit_suite()'s, one per
 * image) in @path.  FALSE with @error naming the file. */
gboolean run_report_write_junit_suites (const char *path, const GString *suites, guint tests,
                                        guint failures, guint errors, GError **error);

/* One `::error title=airlock ARCH::…` line on stdout per offending attempt
 * (per reason when a verdict that is not a pass names none). */
void run_report_github_annotations (const RunReport *r);
