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
