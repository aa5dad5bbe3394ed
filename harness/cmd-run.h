/* What `airlock run` and `airlock gate` share: the gate is the run with
 * the controls, a policy and a verdict. */
#pragma once

#include "run-report.h"

/* Parses @argv as `airlock run` or, with @gate_mode, `airlock gate`
 * (cmd-run.c), runs each arch, writes --json's summary, the gate's --junit
 * file and GitHub annotations.  Returns the command's exit status. */
int run_command (int argc, char **argv, gboolean gate_mode);

/* The gate's verdict table on @r->text, one row per arch, then every
 * reason (and the --json verdict lines).  Returns the status the verdicts
 * give: HARNESS_EXIT_OK, _FAIL or _INCONCLUSIVE (cmd-gate.c). */
int gate_report (RunReport *r);
