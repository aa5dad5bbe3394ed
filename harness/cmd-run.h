/* What `airlock run` and `airlock gate` share: the gate is the run with
 * the controls, a policy and a verdict. */
#pragma once

#include "run-report.h"

/* What a gate reports once every arch has ended: its verdict table on
 * @r->text (and the --json verdict lines).  Returns the status the
 * verdicts give: HARNESS_EXIT_OK, _FAIL or _INCONCLUSIVE.  cmd-gate.c's
 * gate_report, handed in, so cmd-run.c calls nothing of cmd-gate.c and the
 * two files do not call each other. */
typedef int (*RunVerdictReport) (RunReport *r);

/* Parses @argv as `airlock run` or, with a @verdicts report, `airlock
 * gate` (cmd-run.c), runs each arch, writes --json's summary, the gate's
 * --junit file and GitHub annotations.  Returns the command's exit
 * status. */
int run_command (int argc, char **argv, RunVerdictReport verdicts);

/* One image of a gate over several (cmd-gate.c): what run_command_item()
 * hands back for the gate's table, its --junit file and its --json
 * summary, and how that one image's own reports change. */
typedef struct {
  GString *junit;                          /* in: this image's <testsuite> is appended here */
  guint junit_tests, junit_failures, junit_errors;   /* out: added to */
  gboolean ran;                            /* out: every input checked, the runs begun */
  const char *verdict;                     /* out: "pass", "fail", "inconclusive"; NULL: none */
  const char *arch_verdicts[AIRLOCK_N_ARCHES];       /* out: NULL for an arch not asked */
} RunListItem;

/* run_command() for one image of a list (@item not NULL): its --json
 * summary is an "image-summary" line (the list's own "summary" comes last)
 * and its JUnit testsuite goes to @item instead of a file of its own. */
int run_command_item (int argc, char **argv, RunVerdictReport verdicts, RunListItem *item);
